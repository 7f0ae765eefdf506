import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { ROOT } from '../helpers/server-process.js';
import { claim, eventTypes, report, verifyExitCode } from './claims.js';

const WORKER = path.join(ROOT, 'test/operations/fixtures/claim-worker.mjs');
const payment = { method: 'POST', route: '/payments', command: { amount: 4200, currency: 'EUR', order: 'A-1' }, agent_run_id: 'retry-run', lease_seconds: 2 };

/** Starts the worker process and waits for the lease it prints after its claim. */
async function claimInWorker(url: string, apiKey: string, key: string) {
  const child = spawn(process.execPath, [WORKER, url, apiKey, key, '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before claiming`)));
  });
  return { child, claimed: JSON.parse(line) as { status: number; operation_id: string; lease: { token: string } } };
}

for (const kind of await storeKinds()) {
  test(`[${kind}] a worker killed with kill -9 after its claim: unknown after its lease, retries answer unknown, listed, resolved by an admin`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const { child, claimed } = await claimInWorker(app.url, gw, 'pay-A-1');
    t.is(claimed.status, 201);
    const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    process.kill(child.pid!, 'SIGKILL');
    t.is(await exited, 'SIGKILL');

    // Before the lease runs out, a retry is in progress; it never gets to execute.
    const early = await claim(app, gw, 'pay-A-1', payment);
    t.is(early.body.outcome, 'in_progress');

    // The sweeper marks it within about a second of the 2 s lease running out.
    const deadline = Date.now() + 8000;
    let listed: Array<{ id: string; state: string }> = [];
    while (Date.now() < deadline) {
      const row = await app.context.store.db.selectFrom('operations').select('state').where('id', '=', claimed.operation_id).executeTakeFirstOrThrow();
      if (row.state === 'unknown') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    listed = (await app.request('GET', '/v1/operations?state=unknown', { key: gw })).body.items;
    t.deepEqual(listed.map((o) => [o.id, o.state]), [[claimed.operation_id, 'unknown']]);

    const retry = await claim(app, gw, 'pay-A-1', payment);
    t.is(retry.status, 409);
    t.is(retry.body.outcome, 'unknown');
    t.false(retry.body.execute);

    // The killed worker's token, replayed by a zombie copy, is dead.
    const zombie = await report(app, gw, claimed.operation_id, { type: 'sent', lease_token: claimed.lease.token });
    t.is(zombie.body.error.code, 'lease_lost');

    const resolved = await app.request('POST', `/v1/operations/${claimed.operation_id}/resolve`, {
      key: app.adminKey, body: { state: 'failed', note: 'no payment for order A-1 at the provider' },
    });
    t.is(resolved.status, 200);
    t.is(resolved.body.operation.state, 'failed');
    t.is((await app.request('GET', '/v1/operations?state=unknown', { key: gw })).body.items.length, 0);
    const types = await eventTypes(app, 'acme', claimed.operation_id);
    t.deepEqual(types, ['attempted', 'retried', 'lease_expired', 'retried', 'resolved']);
    const verified = await verifyExitCode(app);
    t.is(verified.code, 0, verified.stdout + verified.stderr);
  });
}
