import test from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { deadlineMargin } from '../../src/http/deadline.js';
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
    const sentAt = Date.now();
    const [late, lateReport] = await Promise.all([
      claim(app, gw, 'held', ticketClaim('held')),
      report(app, gw, first.body.operation.id, { type: 'sent', lease_token: first.body.lease.token }),
    ]);
    const answeredMs = Date.now() - sentAt;
    // Answered a margin before the deadline (so a client that gives up at it still gets the
    // answer), never earlier; how much the event loop's lag eats of the margin is the machine's.
    t.true(answeredMs >= DEADLINE_MS - deadlineMargin(DEADLINE_MS), `answered ${answeredMs} ms after they were sent: before the deadline less its margin`);
    t.true(answeredMs < DEADLINE_MS + 500, `answered ${answeredMs} ms after they were sent`);
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

test('a body that stops arriving is the client\'s fault at the deadline: 400 invalid_request and the connection closed, not 503 "the service is too busy"', async (t) => {
  const app = await startTestApp(t, 'sqlite', { requestDeadlineMs: DEADLINE_MS });
  const gw = await app.keyFor('acme', 'gateway');
  const body = JSON.stringify(ticketClaim('stalled'));
  const head = `POST /v1/operations HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${gw}\r\nidempotency-key: stalled-1\r\n` +
    `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
  const { rawExchange, parseAnswers } = await import('../helpers/raw-http.js');
  const exchange = await rawExchange(app.url, head + body.slice(0, 10), { waitMs: DEADLINE_MS * 4 });
  const [answer] = parseAnswers(exchange.text);
  t.is(answer?.status, 400, exchange.text);
  t.is(JSON.parse(answer!.body).error.code, 'invalid_request');
  t.regex(JSON.parse(answer!.body).error.message, /the request body did not arrive within the 1 s deadline; nothing of it was written/);
  t.is(answer!.headers.connection, 'close');
  t.true(exchange.closed, 'the server closed the connection');
  t.is((await claim(app, gw, 'stalled-1', ticketClaim('stalled'))).status, 201, 'nothing of the stalled claim was written: the key is free');
});
