// Failures around the write, through `gatehouse proxy` (docs/proxy.md), every part a real process:
// an upstream that refuses connections, dies, resets, errs or hangs; a proxy killed with kill -9
// between forwarding and reporting; Gatehouse stopped. A retry never sends a write twice.
import test from 'ava';
import { GatehouseClient } from '../../src/client/index.js';
import { freePort } from '../helpers/server-process.js';
import { call, eventually, startProxyEnv, type ProxyEnv } from './env.js';

let env: ProxyEnv;
let gateway: GatehouseClient;
test.before(async () => {
  // A short lease, so operations whose write may have happened turn unknown within seconds.
  env = await startProxyEnv({ proxyArgs: ['--lease', '3s', '--timeout', '4s'] });
  gateway = new GatehouseClient({ baseUrl: env.gatehouse.url, apiKey: env.gatewayKey });
});
test.after.always(async () => env?.close());

let n = 0;
const unique = (name: string) => `${name}-${++n}-${Date.now()}`;
const writesWith = async (prefix: string, key: string) => (await env.writes(prefix)).filter((w) => w.headers['idempotency-key'] === key).length;
const stateOf = async (key: string) => (await gateway.findByKey(key))?.state;
const becomesUnknown = (key: string) => eventually(async () => ((await stateOf(key)) === 'unknown' ? true : undefined), `${key} becomes unknown`);

test.serial('connection refused: canceled, 502 upstream_unavailable, and the same key runs the write once the upstream is back', async (t) => {
  const deadPort = await freePort();
  const nowhere = await env.startProxy(['--upstream', `http://127.0.0.1:${deadPort}`]);
  t.teardown(() => nowhere.process.stop());
  const key = unique('refused');
  const refused = await call(nowhere.url, 'POST', '/tickets', { key, body: { title: 'later' } });
  t.is(refused.status, 502);
  t.is(refused.body.error.code, 'upstream_unavailable');
  t.is(await stateOf(key), 'canceled', 'nothing was sent: reported as not made');
  // The answer names the operation it canceled, as every gated answer about one does.
  const canceled = (await gateway.findByKey(key))!;
  t.is(refused.body.error.operation_id, canceled.id);
  t.is(refused.headers.get('gatehouse-operation'), canceled.id);
  t.is(refused.headers.get('gatehouse-outcome'), 'created');
  // The caller retries with the same key through a proxy that reaches the upstream (docs/retry-contract.md: a new lease).
  const retried = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'later' } });
  t.is(retried.status, 201, retried.text);
  t.is(retried.headers.get('gatehouse-outcome'), 'created');
  t.is(await writesWith('/tickets', key), 1);
  const timeline = await gateway.timeline((await gateway.findByKey(key))!.id);
  t.deepEqual(timeline.map((e) => (e.header as { type: string } | undefined)?.type ?? e.type), ['attempted', 'canceled', 'leased', 'sent', 'completed']);
});

test.serial('an upstream 5xx answers 502 upstream_unknown; the operation turns unknown and retries never re-send', async (t) => {
  const key = unique('error');
  const first = await call(env.proxy.url, 'POST', '/error', { key, body: { title: 'x' } });
  t.is(first.status, 502);
  t.is(first.body.error.code, 'upstream_unknown');
  t.is(first.body.error.upstream_status, 500);
  const retry = await call(env.proxy.url, 'POST', '/error', { key, body: { title: 'x' } });
  t.is(retry.status, 409);
  t.true(['in_progress', 'unknown'].includes(retry.body.outcome), retry.text);
  await becomesUnknown(key);
  const later = await call(env.proxy.url, 'POST', '/error', { key, body: { title: 'x' } });
  t.is(later.status, 409);
  t.is(later.body.outcome, 'unknown');
  t.is(later.body.operation.state, 'unknown');
  t.is(await writesWith('/error', key), 1);
});

test.serial('a reset after the request left answers 502 upstream_unknown; a hang answers 504 at --timeout', async (t) => {
  const resetKey = unique('reset');
  const reset = await call(env.proxy.url, 'POST', '/reset', { key: resetKey, body: {} });
  t.is(reset.status, 502);
  t.is(reset.body.error.code, 'upstream_unknown');
  const hangKey = unique('hang');
  const hang = await call(env.proxy.url, 'POST', '/hang', { key: hangKey, body: {} });
  t.is(hang.status, 504);
  t.is(hang.body.error.code, 'upstream_unknown');
  for (const key of [resetKey, hangKey]) {
    await becomesUnknown(key);
    t.is((await call(env.proxy.url, 'POST', key === resetKey ? '/reset' : '/hang', { key, body: {} })).body.outcome, 'unknown');
  }
  t.is(await writesWith('/reset', resetKey), 1);
  t.is(await writesWith('/hang', hangKey), 1);
});

test.serial('the upstream killed mid-request: 502, unknown, retries never re-send, an admin resolves it and retries get the resolution', async (t) => {
  const key = unique('killed');
  const pending = call(env.proxy.url, 'POST', '/hang', { key, body: { amount: 5 } });
  await eventually(async () => ((await writesWith('/hang', key)) === 1 ? true : undefined), 'the write reached the upstream');
  await env.restartUpstream(); // kill -9, then a fresh upstream on the same port
  const answer = await pending;
  t.is(answer.status, 502);
  t.is(answer.body.error.code, 'upstream_unknown');
  await becomesUnknown(key);
  const retry = await call(env.proxy.url, 'POST', '/hang', { key, body: { amount: 5 } });
  t.is(retry.status, 409);
  t.is(retry.body.outcome, 'unknown');
  t.is(await writesWith('/hang', key), 0, 'the restarted upstream never saw it again');

  const id = (await gateway.findByKey(key))!.id;
  await env.admin.resolve(id, { state: 'succeeded', note: 'the ledger downstream shows payment 77', provider_ref: 'pay_77', response: { status: 201, body: { id: 'pay_77' } } });
  const resolved = await call(env.proxy.url, 'POST', '/hang', { key, body: { amount: 5 } });
  t.is(resolved.status, 201);
  t.is(resolved.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(resolved.body, { id: 'pay_77' });
  t.is(await writesWith('/hang', key), 0);
});

test.serial('kill -9 of the proxy between forwarding and reporting: the retry through a restarted proxy does not write again', async (t) => {
  const victim = await env.startProxy();
  const key = unique('proxy-crash');
  const pending = call(victim.url, 'POST', '/tickets', { key, body: { title: 'crash' }, headers: { 'x-delay-ms': '1500' } });
  await eventually(async () => ((await writesWith('/tickets', key)) === 1 ? true : undefined), 'the write reached the upstream');
  await victim.process.kill9(); // forwarded, not reported: the upstream will write and answer nobody
  await t.throwsAsync(pending, { any: true });
  t.is(await stateOf(key), 'sent');
  const restarted = await env.startProxy([], victim.port);
  t.teardown(() => restarted.process.stop());
  const retry = await call(restarted.url, 'POST', '/tickets', { key, body: { title: 'crash' } });
  t.is(retry.status, 409);
  t.true(['in_progress', 'unknown'].includes(retry.body.outcome), retry.text);
  await becomesUnknown(key);
  const later = await call(restarted.url, 'POST', '/tickets', { key, body: { title: 'crash' } });
  t.is(later.body.outcome, 'unknown');
  t.is(await writesWith('/tickets', key), 1, 'written once, by the proxy that died');
});

test.serial('Gatehouse stopped: gated requests answer 503 gatehouse_unavailable and the upstream is never called; ungated ones still pass', async (t) => {
  await env.gatehouse.stop();
  const key = unique('no-gatehouse');
  const res = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'must not be written' } });
  t.is(res.status, 503);
  t.is(res.body.error.code, 'gatehouse_unavailable');
  t.truthy(res.headers.get('retry-after'));
  t.is(await writesWith('/tickets', key), 0, 'never a forwarded write');
  const read = await call(env.proxy.url, 'GET', '/tickets/1');
  t.is(read.status, 200);
});
