// An upstream answer that fails after it started, through `gatehouse proxy`, every part a real
// process: the status and headers arrive, then the body breaks off, grows past --max-response or
// stops coming. The write may have happened, so the caller gets a 502/504 at once (never a hang),
// the proxy reports nothing more and stops heartbeating, the operation turns `unknown` when its
// lease ends, and no retry sends the write again (docs/proxy.md, docs/retry-contract.md).
import test, { type ExecutionContext } from 'ava';
import { GatehouseClient } from '../../src/client/index.js';
import { call, eventually, startProxyEnv, type ProxyAnswer, type ProxyEnv } from './env.js';

const LEASE_MS = 2_000;
const TIMEOUT_MS = 6_000;

let env: ProxyEnv;
let gateway: GatehouseClient;
test.before(async () => {
  // Default --max-response (1 MiB). A short lease, so a write that may have happened turns unknown within seconds.
  env = await startProxyEnv({ proxyArgs: ['--lease', `${LEASE_MS}ms`, '--timeout', `${TIMEOUT_MS}ms`] });
  gateway = new GatehouseClient({ baseUrl: env.gatehouse.url, apiKey: env.gatewayKey });
});
test.after.always(async () => env?.close());

let n = 0;
const unique = (name: string) => `${name}-${++n}-${Date.now()}`;

/** One write through the proxy, timed; a proxy that never answers fails the test instead of hanging it. */
async function timedCall(route: string, key: string, headers: Record<string, string> = {}): Promise<{ answer: ProxyAnswer; ms: number }> {
  const started = Date.now();
  const answer = await call(env.proxy.url, 'POST', route, { key, body: { title: 'x' }, headers, signal: AbortSignal.timeout(TIMEOUT_MS + 10_000) })
    .catch((error: Error) => { throw new Error(`the proxy did not answer within ${TIMEOUT_MS + 10_000} ms: ${error.message}`); });
  return { answer, ms: Date.now() - started };
}

/** After the 502/504: nothing more reported, the lease runs out, retries get `unknown`, one upstream request in all. */
async function endsUnknown(t: ExecutionContext, route: string, key: string, answer: ProxyAnswer, headers: Record<string, string> = {}) {
  const op = (await gateway.findByKey(key))!;
  t.truthy(op, 'the claim is on record');
  t.is(answer.headers.get('gatehouse-outcome'), 'unknown');
  t.is(answer.headers.get('gatehouse-operation'), op.id);
  t.is(answer.body.error.operation_id, op.id);
  t.true(['sent', 'unknown'].includes(op.state), `nothing reported after sent, not ${op.state}`);
  // Heartbeats stopped with the answer: the lease ends within its length (plus the sweep), not never.
  const answeredAt = Date.now();
  await eventually(async () => ((await gateway.findByKey(key))?.state === 'unknown' ? true : undefined), `${key} becomes unknown`, LEASE_MS + 15_000);
  t.true(Date.now() - answeredAt < LEASE_MS + 15_000);
  const timeline = await gateway.timeline(op.id);
  t.deepEqual(timeline.map((e) => (e.header as { type: string } | undefined)?.type ?? e.type), ['attempted', 'sent', 'lease_expired']);
  const retry = await call(env.proxy.url, 'POST', route, { key, body: { title: 'x' }, headers, signal: AbortSignal.timeout(TIMEOUT_MS + 10_000) });
  t.is(retry.status, 409, retry.text);
  t.is(retry.body.outcome, 'unknown');
  t.is(retry.body.operation.state, 'unknown');
  t.is(retry.headers.get('gatehouse-outcome'), 'unknown');
  const sentUpstream = (await env.writes(route)).filter((w) => w.headers['idempotency-key'] === key);
  t.is(sentUpstream.length, 1, 'the upstream saw exactly one request, never a second');
}

for (const route of ['/cut', '/cut-chunked']) {
  test.serial(`an answer cut off mid-body (${route}) answers 502 upstream_unknown at once, and the operation turns unknown at its lease end`, async (t) => {
    const key = unique(route.slice(1));
    const { answer, ms } = await timedCall(route, key);
    t.is(answer.status, 502, answer.text);
    t.is(answer.body.error.code, 'upstream_unknown');
    t.true(ms < TIMEOUT_MS - 1_000, `answered as the connection broke, not at --timeout (${ms} ms)`);
    await endsUnknown(t, route, key, answer);
  });
}

test.serial('an answer over --max-response (2 MiB of chunked JSON) answers 502 upstream_response_too_large at once, and the operation turns unknown', async (t) => {
  const key = unique('huge');
  const headers = { 'x-size': String(2 * 1024 * 1024) };
  const { answer, ms } = await timedCall('/huge', key, headers);
  t.is(answer.status, 502, answer.text);
  t.is(answer.body.error.code, 'upstream_response_too_large');
  t.true(ms < TIMEOUT_MS - 1_000, `answered as the limit was passed, not at --timeout (${ms} ms)`);
  await endsUnknown(t, '/huge', key, answer, headers);
});

test.serial('an answer that stops mid-body answers 504 upstream_unknown at --timeout, and the operation turns unknown', async (t) => {
  const key = unique('stall');
  const { answer, ms } = await timedCall('/stall', key);
  t.is(answer.status, 504, answer.text);
  t.is(answer.body.error.code, 'upstream_unknown');
  t.true(ms >= TIMEOUT_MS - 500, `not before --timeout (${ms} ms)`);
  await endsUnknown(t, '/stall', key, answer);
});
