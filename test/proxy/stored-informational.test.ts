// A response stored with a 1xx status before Gatehouse refused one (docs/http-api.md), replayed
// through `gatehouse proxy` (a real process) in front of the service holding it. A 1xx is never
// a final answer (RFC 9110 §15.2): written as one, it left every retry of the key waiting for the
// real answer. The stored data is left as it is; the replay answers the outcome body instead.
import test from 'ava';
import { BIN, ManagedProcess } from '../helpers/server-process.js';
import { startTestApp } from '../helpers/app.js';
import { movableClock } from '../operations/claims.js';
import { call, startUpstream } from './env.js';

test('[sqlite] a retry whose stored answer is a 1xx (resolved so by an older release) gets the outcome body, not a hang', async (t) => {
  const clock = movableClock();
  const app = await startTestApp(t, 'sqlite', { clock });
  const gatewayKey = await app.keyFor('acme', 'gateway');
  const upstream = await startUpstream();
  t.teardown(() => upstream.process.stop());
  const proxy = new ManagedProcess('gatehouse proxy', [
    BIN, 'proxy', '--upstream', upstream.url, '--gatehouse', app.url, '--port', '0', '--lease', '2s', '--timeout', '3s',
  ], { env: { GATEHOUSE_API_KEY: gatewayKey, GATEHOUSE_LOG_LEVEL: 'info' } });
  t.teardown(() => proxy.stop());
  const [, proxyUrl] = await proxy.waitFor(/gatehouse proxy listening on (http:\/\/\S+)/, 30_000);

  // The write leaves and the connection resets: unknown once the lease ends.
  const write = () => call(proxyUrl!, 'POST', '/reset', { key: 'k-old-101', body: { title: 'x' }, signal: AbortSignal.timeout(10_000) });
  const first = await write();
  t.is(first.status, 502, first.text);
  const id = first.body.error.operation_id as string;
  clock.advance(3_000);
  t.is((await app.request('GET', `/v1/operations/${id}`, { key: gatewayKey })).body.operation.state, 'unknown');
  // Resolved with a 101 below today's schema, as the older release took it over HTTP.
  const admin = (await app.context.principals.authenticate(app.adminKey))!;
  await app.context.operations.resolve(admin, id, { state: 'succeeded', note: 'resolved before 1xx was refused', response: { status: 101 } });

  const retry = await write();
  t.is(retry.status, 200, retry.text);
  t.is(retry.headers.get('gatehouse-outcome'), 'replayed');
  t.is(retry.headers.get('idempotent-replayed'), 'true');
  t.like(retry.body, { outcome: 'replayed', execute: false, operation: { id, state: 'succeeded', response: { status: 101 } } });
  const stored = await app.request('GET', `/v1/operations/${id}`, { key: gatewayKey });
  t.deepEqual(stored.body.operation.response, { status: 101 }, 'the stored answer is left as it was');
});
