import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { connectionArrivals } from '../../src/http/connection-arrivals.js';
import { startTestApp } from '../helpers/app.js';

// Node 20's libuv accepts one connection per event-loop turn, and on SQLite each group commit holds
// its turn while it runs and fsyncs. The server tells the store when connections are arriving
// (src/http/connection-arrivals.ts), and the store lets them in before its next batch
// (SqliteStore.letArrivalsIn): a burst of new connections is not accepted one per batch.

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

test('a new connection sets the signal, asking clears it, and a request on a kept-alive connection does not set it', async (t) => {
  // A bare server: the service's own lease sweeper would ask (and clear) the signal at its own times.
  const server = http.createServer((_req, res) => res.end('{}'));
  const arrivals = connectionArrivals(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => {
    agent.destroy();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const get = () => new Promise<void>((resolve, reject) => {
    http.get(url, { agent }, (response) => {
      response.resume();
      response.on('end', resolve);
    }).on('error', reject);
  });
  t.false(arrivals(), 'nothing has arrived yet');
  await get();
  t.true(arrivals(), 'the first answer came on a new connection');
  t.false(arrivals(), 'asking clears it');
  await get();
  t.false(arrivals(), 'the same connection again: nothing new arrived');
});

test('[sqlite] the service wires its connections to the store', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  t.is(typeof app.context.store.arrivals, 'function');
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
  // The lease sweeper (every second) and the checkpoint timer may commit a unit of their own meanwhile.
  const units = batches.reduce((a, b) => a + b, 0);
  t.true(units >= burst && units <= burst + 2, `${units} units committed`);
  // One batch per connection (40) when each new connection waits for the batch before it.
  t.true(batches.length <= burst / 4 + 2, `${batches.length} batches: ${batches.join(' ')}`);
});
