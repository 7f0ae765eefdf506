import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp } from '../helpers/app.js';
import { runCli, spawnGatehouse } from '../helpers/server-process.js';
import { createCluster, gatewayKeys, postgresAvailable } from '../postgres/cluster.js';
import { claim as claimOn } from '../postgres/traffic.js';
import { publicKeyInfo, signingKeyFromSeed } from '../../src/core/signing-key.js';
import { eventHash } from '../../src/core/event-hash.js';
import { GENESIS_PREV_HASH, type EventHeader } from '../../src/core/event-shape.js';
import { claim, movableClock, ticketClaim } from '../operations/claims.js';

const withPostgres = await postgresAvailable();

test('[sqlite] a clock stepped back an hour does not make the chain\'s event times run backwards', async (t) => {
  const clock = movableClock();
  const app = await startTestApp(t, 'sqlite', { clock });
  const gw = await app.keyFor('acme', 'gateway');
  await claim(app, gw, 'before-step', ticketClaim('before'));
  clock.advance(-3_600_000);
  await claim(app, gw, 'after-step', ticketClaim('after'));
  const times = (await app.context.store.db.selectFrom('events').select('ts').where('account_id', '=', 'acme').orderBy('seq').execute()).map((e) => e.ts);
  t.is(times.length, 2);
  t.true(times[1]! >= times[0]!, `${times[1]} is not before ${times[0]}`);
});

/** An export whose third event is stamped an hour before the second, every hash correct. */
function exportWithTimeGoingBack(file: string): void {
  const times = ['2024-05-01T10:00:00.000Z', '2024-05-01T10:00:01.000Z', '2024-05-01T09:00:01.000Z'];
  let prev = GENESIS_PREV_HASH;
  const lines: unknown[] = [{ format: 'gatehouse-export', version: 1, ledger_id: 'test', account_id: 'acme', exported_at: times[1], keys: [] }];
  times.forEach((ts, i) => {
    const header: EventHeader = {
      seq: i + 1, account_id: 'acme', ts, type: 'attempted', operation_id: `op_${i}`, idempotency_key: `k${i}`, fingerprint: 'f'.repeat(64),
      actor: 'prn_x', agent_run_id: null, method: 'POST', route: '/tickets', state: 'running', provider_ref: null, response_status: null,
      payload_hash: null, prev_hash: prev,
    };
    prev = eventHash(header);
    lines.push({ kind: 'event', header, hash: prev, payload: null });
  });
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

test('verify warns on stderr and in --json when event time goes backwards, and still exits 0', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ts-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'export.ndjson');
  exportWithTimeGoingBack(file);
  // A pinned key: there are no checkpoints for it to check, the warning is what is looked at.
  fs.writeFileSync(path.join(dir, 'keys.json'), JSON.stringify({ keys: [publicKeyInfo(signingKeyFromSeed(crypto.randomBytes(32), 'gatehouse/test'))] }));
  const human = await runCli(['verify', file, '--keys', path.join(dir, 'keys.json')]);
  t.is(human.code, 0, human.stdout + human.stderr);
  t.regex(human.stderr, /warning: account acme: event time goes backwards 1 time \(first at seq 3\)/);
  const json = await runCli(['verify', file, '--keys', path.join(dir, 'keys.json'), '--json']);
  t.is(json.code, 0);
  const report = JSON.parse(json.stdout);
  t.true(report.ok);
  t.deepEqual(report.warnings, [
    'account acme: event time goes backwards 1 time (first at seq 3): a writer\'s clock was behind an earlier one\'s',
    'account acme: events 1–3 are covered by no signed checkpoint (the account has none): nothing signed covers them yet; a checkpoint saved later (--checkpoint) shows whether they were rewritten',
  ]);
});

if (withPostgres) {
  test('[postgres] two instances whose clocks are 120 s apart: no live lease is marked unknown, and leases end on the database\'s clock', async (t) => {
    const cluster = await createCluster(t);
    const [steady] = await cluster.start(1);
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-skew-'));
    t.teardown(() => fs.rmSync(scratch, { recursive: true, force: true }));
    // This instance's wall clock runs two minutes ahead (test-only offset, read by src/config).
    const ahead = await spawnGatehouse({ args: ['--data-dir', scratch], env: { ...cluster.env, GATEHOUSE_TEST_CLOCK_OFFSET_MS: '120000' }, name: 'gatehouse serve (clock +120 s)' });
    t.teardown(() => ahead.stop());
    const [key] = await gatewayKeys(cluster, ['acme']);
    const body = (n: number) => ({ method: 'POST', route: '/tickets', command: { n }, lease_seconds: 60 });
    const onSteady = await claimOn(steady!.url, key!, 'steady-1', body(1));
    const onAhead = await claimOn(ahead.url, key!, 'ahead-1', body(2));
    t.is(onSteady.status, 201);
    t.is(onAhead.status, 201);
    // A lease of 60 s ends 60 s from the database's now, whichever instance issued it.
    const skew = Date.parse(onAhead.body.lease.expires_at) - Date.parse(onSteady.body.lease.expires_at);
    t.true(Math.abs(skew) < 10_000, `the two leases end ${skew} ms apart`);
    // Several sweeps of both instances (each sweeps every second).
    await new Promise((r) => setTimeout(r, 4_000));
    const rows = await cluster.query<{ idempotency_key: string; state: string }>('select idempotency_key, state from operations order by idempotency_key');
    t.deepEqual(rows.map((r) => [r.idempotency_key, r.state]), [['ahead-1', 'running'], ['steady-1', 'running']]);
    for (const [url, op] of [[steady!.url, onAhead.body], [ahead.url, onSteady.body]] as const) {
      const sent = await fetch(`${url}/v1/operations/${op.operation.id}/events`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'sent', lease_token: op.lease.token }),
      });
      t.is(sent.status, 200, 'the holder still holds its lease on the other instance');
    }
  });
}
