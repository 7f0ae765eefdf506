// A new key whose business key the account already used (`reused`), through `gatehouse proxy`,
// every part a real process (docs/proxy.md, how every outcome is answered). The existing
// operation answers; what the caller is told depends on what that operation can still become on
// its own: only one that is running gets `Retry-After`, since waiting changes nothing for the
// others, and an agent obeying a `Retry-After` would ask forever.
import test, { type ExecutionContext } from 'ava';
import { GatehouseClient } from '../../src/client/index.js';
import { freePort } from '../helpers/server-process.js';
import { call, eventually, startProxyEnv, type ProxyAnswer, type ProxyEnv } from './env.js';

const APPROVAL = { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 3600 };
const POLICIES = { policies: [
  { method: 'POST', route: '/refunds', approval: APPROVAL, business_key: 'refund:{/order}' },
  { method: 'POST', route: '/tickets', business_key: 'ticket:{/order}' },
  { method: 'POST', route: '/hang', business_key: 'hang:{/order}' },
] };

let env: ProxyEnv;
let gateway: GatehouseClient;
let approver: GatehouseClient;
test.before(async () => {
  // A short lease and timeout, so a write that may have happened turns unknown within seconds.
  env = await startProxyEnv({ config: POLICIES, proxyArgs: ['--lease', '2s', '--timeout', '3s'] });
  gateway = new GatehouseClient({ baseUrl: env.gatehouse.url, apiKey: env.gatewayKey });
  approver = new GatehouseClient({ baseUrl: env.gatehouse.url, apiKey: env.approverKey });
});
test.after.always(async () => env?.close());

let n = 0;
const unique = (name: string) => `${name}-${++n}-${Date.now()}`;

/** A reused answer that waiting cannot change: it names the operation and says what will change it, with no Retry-After. */
function noLoop(t: ExecutionContext, answer: ProxyAnswer, status: number, state: string, operationId: string) {
  t.is(answer.status, status, answer.text);
  t.is(answer.headers.get('gatehouse-outcome'), 'reused');
  t.is(answer.headers.get('gatehouse-operation'), operationId);
  t.is(answer.headers.get('retry-after'), null, 'waiting changes nothing: no Retry-After to loop on');
  t.is(answer.body.outcome, 'reused');
  t.false(answer.body.execute);
  t.is(answer.body.operation.id, operationId);
  t.is(answer.body.operation.state, state);
  t.is(typeof answer.body.message, 'string');
}

test.serial('reused while awaiting approval or approved: 409 naming the operation and its key, no Retry-After; replayed once its own key ran it', async (t) => {
  const order = unique('o');
  const asked = await call(env.proxy.url, 'POST', '/refunds', { key: unique('ref'), body: { order, amount: 1 } });
  t.is(asked.status, 202, asked.text);
  const firstKey = asked.body.operation.idempotency_key as string;
  const pending = await call(env.proxy.url, 'POST', '/refunds', { key: unique('ref-b'), body: { order, amount: 1 } });
  noLoop(t, pending, 409, 'awaiting_approval', asked.body.operation.id);
  t.true(pending.body.message.includes(firstKey), pending.body.message);

  await approver.decide(asked.body.approval.id, { decision: 'approve', fingerprint: asked.body.operation.fingerprint, reason: 'refund checked' });
  const approved = await call(env.proxy.url, 'POST', '/refunds', { key: unique('ref-c'), body: { order, amount: 1 } });
  noLoop(t, approved, 409, 'approved', asked.body.operation.id);
  t.is((await env.writes('/refunds')).filter((w) => w.body.includes(order)).length, 0, 'a new key never runs another key\'s operation');

  const ran = await call(env.proxy.url, 'POST', '/refunds', { key: firstKey, body: { order, amount: 1 } });
  t.is(ran.status, 201, ran.text);
  const replay = await call(env.proxy.url, 'POST', '/refunds', { key: unique('ref-d'), body: { order, amount: 1 } });
  t.is(replay.status, 201, replay.text);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.headers.get('gatehouse-outcome'), 'reused');
  t.deepEqual(replay.body, ran.body);
});

test.serial('reused after a denial: 403 with the outcome body, no Retry-After', async (t) => {
  const order = unique('o');
  const asked = await call(env.proxy.url, 'POST', '/refunds', { key: unique('ref'), body: { order, amount: 1 } });
  t.is(asked.status, 202, asked.text);
  await approver.decide(asked.body.approval.id, { decision: 'deny', fingerprint: asked.body.operation.fingerprint, reason: 'not a real order' });
  const reused = await call(env.proxy.url, 'POST', '/refunds', { key: unique('ref-b'), body: { order, amount: 1 } });
  noLoop(t, reused, 403, 'denied', asked.body.operation.id);
  t.is((await env.writes('/refunds')).filter((w) => w.body.includes(order)).length, 0);
});

test.serial('reused after a canceled write: 409 saying to retry with the operation\'s own key, which then runs it once', async (t) => {
  const deadPort = await freePort();
  const nowhere = await env.startProxy(['--upstream', `http://127.0.0.1:${deadPort}`]);
  t.teardown(() => nowhere.process.stop());
  const order = unique('o');
  const firstKey = unique('t');
  const refused = await call(nowhere.url, 'POST', '/tickets', { key: firstKey, body: { order } });
  t.is(refused.status, 502, refused.text);
  t.is(refused.body.error.code, 'upstream_unavailable');
  const op = (await gateway.findByKey(firstKey))!;
  t.is(op.state, 'canceled');

  const reused = await call(env.proxy.url, 'POST', '/tickets', { key: unique('t-b'), body: { order } });
  noLoop(t, reused, 409, 'canceled', op.id);
  t.true(reused.body.message.includes(firstKey), reused.body.message);
  t.is((await env.writes('/tickets')).filter((w) => w.body.includes(order)).length, 0, 'nothing sent for the new key');

  const ran = await call(env.proxy.url, 'POST', '/tickets', { key: firstKey, body: { order } });
  t.is(ran.status, 201, ran.text);
  const replay = await call(env.proxy.url, 'POST', '/tickets', { key: unique('t-c'), body: { order } });
  t.is(replay.status, 201, replay.text);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is((await env.writes('/tickets')).filter((w) => w.body.includes(order)).length, 1, 'written once');
});

test.serial('reused while running: 409 with Retry-After; once it turns unknown: 409 without it', async (t) => {
  const order = unique('o');
  const firstKey = unique('h');
  const pending = call(env.proxy.url, 'POST', '/hang', { key: firstKey, body: { order } });
  await eventually(async () => ((await env.writes('/hang')).some((w) => w.body.includes(order)) ? true : undefined), 'the write reached the upstream');
  const op = (await gateway.findByKey(firstKey))!;
  const running = await call(env.proxy.url, 'POST', '/hang', { key: unique('h-b'), body: { order } });
  t.is(running.status, 409, running.text);
  t.is(running.body.outcome, 'reused');
  t.is(running.body.operation.id, op.id);
  t.is(running.headers.get('retry-after'), '1', 'a running write ends on its own: asking again soon is right');

  t.is((await pending).status, 504);
  await eventually(async () => ((await gateway.findByKey(firstKey))?.state === 'unknown' ? true : undefined), 'the operation turns unknown');
  const unknown = await call(env.proxy.url, 'POST', '/hang', { key: unique('h-c'), body: { order } });
  noLoop(t, unknown, 409, 'unknown', op.id);
  t.is((await env.writes('/hang')).filter((w) => w.body.includes(order)).length, 1, 'never sent again');
});
