// docs/retry-contract.md: a claim with the same key and fingerprint on a `canceled` operation takes a new
// lease (201 created, recorded as `leased`): a failure before the write must not burn the key.
// And `Retry-After` on in_progress is a short hint, never the lease length.
import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { retryAfterSeconds } from '../../src/operations/lease.js';
import { claim, eventTypes, movableClock, report, ticketClaim, verifyExitCode } from './claims.js';

const kinds = await storeKinds();

test('Retry-After is a short hint: at least 1 s, at most the hint, never past the lease end', (t) => {
  const now = 1_000_000;
  t.is(retryAfterSeconds(now + 60_000, now), 1);
  t.is(retryAfterSeconds(now + 3_600_000, now, 2), 2);
  t.is(retryAfterSeconds(now + 1_200, now, 5), 2, 'the lease ends in 1.2 s: the hint stops at its end (whole seconds, rounded up)');
  t.is(retryAfterSeconds(now + 200, now, 5), 1, 'never below 1');
  t.is(retryAfterSeconds(now - 5_000, now), 1);
  t.is(retryAfterSeconds(null, now), 1);
});

for (const kind of kinds) {
  test(`[${kind}] the run that takes over a canceled operation's lease is the one its sent and completed events name, and the agent_run_id filter finds`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'k-handover', ticketClaim('handover', { agent_run_id: 'run-1' }));
    const id = first.body.operation.id;
    await report(app, gw, id, { type: 'canceled', lease_token: first.body.lease.token });
    const retry = await claim(app, gw, 'k-handover', ticketClaim('handover', { agent_run_id: 'run-2' }));
    t.is(retry.status, 201, retry.text);
    t.is(retry.body.operation.agent_run_id, 'run-2', 'the operation names the run that holds its lease');
    await report(app, gw, id, { type: 'sent', lease_token: retry.body.lease.token });
    await report(app, gw, id, { type: 'completed', lease_token: retry.body.lease.token, outcome: 'succeeded', response: { status: 201 } });
    const runs = await app.context.store.db.selectFrom('events').select(['type', 'agent_run_id'])
      .where('account_id', '=', 'acme').where('operation_id', '=', id).orderBy('seq').execute();
    t.deepEqual(runs.map((e) => `${e.type}:${e.agent_run_id}`), ['attempted:run-1', 'canceled:run-1', 'leased:run-2', 'sent:run-2', 'completed:run-2']);
    const byRun = async (run: string) => (await app.request('GET', `/v1/operations?agent_run_id=${run}`, { key: gw })).body.items.map((o: { id: string }) => o.id);
    t.deepEqual(await byRun('run-2'), [id], 'the run that sent the write finds it');
    t.deepEqual(await byRun('run-1'), [], 'the first run only attempted: its attempt stays in the timeline');
    // A replay from a request that names no run changes nothing.
    const replay = await claim(app, gw, 'k-handover', ticketClaim('handover'));
    t.is(replay.body.operation.agent_run_id, 'run-2');
  });

  test(`[${kind}] a retry of a canceled operation takes a new lease: 201 created, recorded as leased, the old token fenced off`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'k-cancel', ticketClaim());
    const id = first.body.operation.id;
    t.is((await report(app, gw, id, { type: 'canceled', lease_token: first.body.lease.token })).body.operation.state, 'canceled');

    const retry = await claim(app, gw, 'k-cancel', ticketClaim('printer on fire', { agent_run_id: 'run-2', lease_seconds: 30 }));
    t.is(retry.status, 201, retry.text);
    t.is(retry.body.outcome, 'created');
    t.true(retry.body.execute);
    t.is(retry.body.operation.id, id, 'the same operation, not a new one');
    t.is(retry.body.operation.state, 'running');
    t.not(retry.body.lease.token, first.body.lease.token);
    const expires = Date.parse(retry.body.lease.expires_at);
    t.true(expires > Date.now() + 25_000 && expires <= Date.now() + 31_000);
    t.is(retry.headers.get('idempotent-replayed'), null);
    t.deepEqual(await eventTypes(app, 'acme', id), ['attempted', 'canceled', 'leased']);
    const leased = await app.context.store.db.selectFrom('events').select(['agent_run_id', 'state'])
      .where('account_id', '=', 'acme').where('operation_id', '=', id).where('type', '=', 'leased').executeTakeFirstOrThrow();
    t.deepEqual(leased, { agent_run_id: 'run-2', state: 'running' }, 'the timeline names the run that took the new lease');

    const zombie = await report(app, gw, id, { type: 'sent', lease_token: first.body.lease.token });
    t.is(zombie.body.error.code, 'lease_lost');
    // The new lease starts afresh: its own canceled report is recorded, not taken for the old one's repeat.
    const token = retry.body.lease.token;
    t.is((await report(app, gw, id, { type: 'canceled', lease_token: token })).body.operation.state, 'canceled');
    const third = await claim(app, gw, 'k-cancel', ticketClaim());
    t.is(third.status, 201);
    await report(app, gw, id, { type: 'sent', lease_token: third.body.lease.token });
    const done = await report(app, gw, id, { type: 'completed', lease_token: third.body.lease.token, outcome: 'succeeded', response: { status: 201, body: { id: 't-1' } } });
    t.is(done.body.operation.state, 'succeeded');
    const replay = await claim(app, gw, 'k-cancel', ticketClaim());
    t.is(replay.status, 200);
    t.is(replay.body.outcome, 'replayed', 'succeeded stays final');
    t.deepEqual(replay.body.response, { status: 201, body: { id: 't-1' } });
    t.deepEqual(await eventTypes(app, 'acme', id), ['attempted', 'canceled', 'leased', 'canceled', 'leased', 'sent', 'completed', 'replayed']);
    t.is((await verifyExitCode(app)).code, 0, 'the chain with re-leases verifies');
  });

  test(`[${kind}] a canceled operation with another fingerprint still answers 422 and is not leased`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'k-cancel-other', ticketClaim());
    await report(app, gw, first.body.operation.id, { type: 'canceled', lease_token: first.body.lease.token });
    const other = await claim(app, gw, 'k-cancel-other', ticketClaim('another title'));
    t.is(other.status, 422);
    t.is(other.body.error.code, 'fingerprint_mismatch');
    t.is(other.body.error.state, 'canceled');
  });

  test(`[${kind}] concurrent retries of a canceled operation: exactly one gets the lease`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'k-cancel-race', ticketClaim());
    await report(app, gw, first.body.operation.id, { type: 'canceled', lease_token: first.body.lease.token });
    const answers = await Promise.all(Array.from({ length: 12 }, () => claim(app, gw, 'k-cancel-race', ticketClaim())));
    t.is(answers.filter((a) => a.status === 201 && a.body.execute === true).length, 1, answers.map((a) => a.status).join());
    for (const a of answers.filter((x) => x.status !== 201)) {
      t.is(a.status, 409);
      t.is(a.body.outcome, 'in_progress');
      t.is(a.headers.get('retry-after'), '1');
    }
  });

  test(`[${kind}] a canceled operation resolved by an admin is leased again; a scope taken meanwhile answers scope_busy`, async (t) => {
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const gw = await app.keyFor('acme', 'gateway');
    const deploy = (version: string) => ({ method: 'POST', route: '/deploys', command: { environment: 'prod', version }, exclusive_scope: 'deploy:prod', lease_seconds: 10 });
    const first = await claim(app, gw, 'dep-1', deploy('v1'));
    clock.advance(11_000); // the lease runs out before a report: unknown
    const asked = await claim(app, gw, 'dep-1', deploy('v1'));
    t.is(asked.body.outcome, 'unknown');
    const resolved = await app.request('POST', `/v1/operations/${first.body.operation.id}/resolve`, {
      key: app.adminKey, body: { state: 'canceled', note: 'the deploy API has no record of it' },
    });
    t.is(resolved.body.operation.state, 'canceled');

    const other = await claim(app, gw, 'dep-2', deploy('v2'));
    t.is(other.status, 201, 'the scope was released when the operation was resolved');
    const busy = await claim(app, gw, 'dep-1', deploy('v1'));
    t.is(busy.status, 409);
    t.is(busy.body.error.code, 'scope_busy');
    t.is((await app.request('GET', `/v1/operations/${first.body.operation.id}`, { key: gw })).body.operation.state, 'canceled', 'refused: nothing changed');

    await report(app, gw, other.body.operation.id, { type: 'canceled', lease_token: other.body.lease.token });
    const again = await claim(app, gw, 'dep-1', deploy('v1'));
    t.is(again.status, 201, again.text);
    t.is(again.body.outcome, 'created');
    t.is((await claim(app, gw, 'dep-3', deploy('v3'))).body.error?.code, 'scope_busy', 'the re-leased operation holds the scope again');
  });
}
