import http from 'node:http';
import test from 'ava';
import { startTestApp } from '../helpers/app.js';

// Node 20's libuv accepts one connection per event-loop turn, and on SQLite each group commit holds
// its turn for an fsync. The server tells the store when connections are arriving
// (src/http/connection-arrivals.ts), and the store lets them in before its next batch
// (SqliteStore.letArrivalsIn): a burst of new connections is not accepted one per fsync.

function postOnNewConnection(url: string, key: string, idempotencyKey: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/v1/operations`, {
      method: 'POST', agent: false,
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end(body);
  });
}

test('[sqlite] a new connection tells the store work is arriving, once; a request on a kept-alive connection does not', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const arrivals = app.context.store.arrivals;
  t.truthy(arrivals, 'the server wired its connections to the store');
  arrivals!();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const get = () => new Promise<void>((resolve, reject) => {
    http.get(`${app.url}/v1/openapi.json`, { agent }, (response) => {
      response.resume();
      response.on('end', resolve);
    }).on('error', reject);
  });
  await get();
  t.true(arrivals!(), 'the first answer came on a new connection');
  t.false(arrivals!(), 'asking clears it');
  await get();
  t.false(arrivals!(), 'the same connection again: nothing new arrived');
});

test('[sqlite] claims on a burst of new connections are all answered, in a few batches rather than one per connection', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  const store = app.context.store;
  const batches: number[] = [];
  const observe = store.onCommit;
  store.onCommit = (units, seconds) => {
    batches.push(units);
    observe?.(units, seconds);
  };
  const burst = 40;
  const body = (i: number) => JSON.stringify({ method: 'POST', route: '/v1/tickets', command: { title: `burst ${i}` } });
  const statuses = await Promise.all(Array.from({ length: burst }, (_, i) => postOnNewConnection(app.url, gw, `burst-${i}`, body(i))));
  t.deepEqual(statuses, Array(burst).fill(201));
  t.is(batches.reduce((a, b) => a + b, 0), burst, 'every claim committed once');
  // One per connection (40) when each new connection waits for the fsync of the batch before it.
  t.true(batches.length <= burst / 4, `${batches.length} batches: ${batches.join(' ')}`);
});
