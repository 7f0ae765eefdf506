import test from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, report, ticketClaim } from '../operations/claims.js';

// A request whose deadline passes while its write waits on the store is answered 503 at once, and
// what it would have written never is (http/deadline.ts, store/work-scope.ts): the write stays
// queued or blocked until the store frees up, then rolls back. The handler must hand its
// request's WorkScope to the store for that; a handler that forgets writes after the answer
// said "nothing of it was written".

const DEADLINE_MS = 1_000;

/** Holds the store's write path from outside the service until `release()`. */
async function holdWrites(app: TestApp): Promise<{ release(): Promise<void> }> {
  const { config } = app.store;
  if (config.store.kind === 'sqlite') {
    const other = new BetterSqlite3(config.store.file);
    other.exec('BEGIN IMMEDIATE');
    return { release: async () => { other.exec('ROLLBACK'); other.close(); } };
  }
  // Every append locks its account's chain head (ledger/chain-write.ts).
  const other = new pg.Client({ connectionString: config.store.url });
  await other.connect();
  await other.query('BEGIN');
  await other.query(`SELECT 1 FROM chains WHERE account_id = 'acme' FOR UPDATE`);
  return { release: async () => { await other.query('ROLLBACK'); await other.end(); } };
}

for (const kind of await storeKinds()) {
  test(`[${kind}] a claim and a report whose deadline passes while the store is held answer 503 "nothing written", and write nothing once it is free`, async (t) => {
    const app = await startTestApp(t, kind, { requestDeadlineMs: DEADLINE_MS });
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'first', ticketClaim('first'));
    t.is(first.status, 201);
    const held = await holdWrites(app);
    const [late, lateReport] = await Promise.all([
      claim(app, gw, 'held', ticketClaim('held')),
      report(app, gw, first.body.operation.id, { type: 'sent', lease_token: first.body.lease.token }),
    ]);
    for (const answer of [late, lateReport]) {
      t.is(answer.status, 503, answer.text);
      t.is(answer.body.error.code, 'store_unavailable', 'the request was waiting on the store');
      t.regex(answer.body.error.message, /nothing of it was written/);
    }
    await held.release();
    // The abandoned units now find the store free; give them the time to run if they were going to.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const read = await app.request('GET', `/v1/operations/${first.body.operation.id}`, { key: gw });
    t.is(read.body.operation.state, first.body.operation.state, 'the abandoned report did not move the operation');
    const retried = await claim(app, gw, 'held', ticketClaim('held'));
    t.is(retried.status, 201, `the abandoned claim left its key unused: ${retried.text}`);
  });
}
