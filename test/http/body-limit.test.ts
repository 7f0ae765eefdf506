import http from 'node:http';
import test from 'ava';
import { startTestApp } from '../helpers/app.js';

/** Streams `chunks` chunks of `size` bytes without a Content-Length and resolves with the answer, or rejects on a reset. */
function streamChunked(url: string, key: string, chunks: number, size: number): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/operations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': 'k-chunked', 'transfer-encoding': 'chunked' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.write('{"method":"POST","route":"/tickets","command":{"pad":"');
    let sent = 0;
    const pump = () => {
      while (sent < chunks) {
        sent++;
        if (!req.write('x'.repeat(size))) return void req.once('drain', pump);
      }
      req.end('"}}');
    };
    pump();
  });
}

test('[sqlite] a chunked body that streams past the limit gets 413 payload_too_large as an answer, not a reset', async (t) => {
  const app = await startTestApp(t, 'sqlite', { maxBodyBytes: 64 * 1024 });
  const gw = await app.keyFor('acme', 'gateway');
  const answer = await streamChunked(app.url, gw, 64, 16 * 1024); // 1 MiB against a 64 KiB limit
  t.is(answer.status, 413);
  t.is(answer.body.error.code, 'payload_too_large');
  const ops = await app.context.store.db.selectFrom('operations').select('id').execute();
  t.is(ops.length, 0, 'nothing was claimed');
  // The connection stays usable for the service: the next request is answered normally.
  t.is((await app.request('GET', '/v1/healthz')).status, 200);
});

test('[sqlite] a chunked body within the limit is read whole', async (t) => {
  const app = await startTestApp(t, 'sqlite', { maxBodyBytes: 64 * 1024 });
  const gw = await app.keyFor('acme', 'gateway');
  const answer = await streamChunked(app.url, gw, 4, 1024);
  t.is(answer.status, 201, JSON.stringify(answer.body));
});
