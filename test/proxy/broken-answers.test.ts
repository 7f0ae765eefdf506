// An upstream answer that fails after it started, through `gatehouse proxy`, every part a real
// process: the status and headers arrive, then the body breaks off or stops coming. The write may
// have happened, so the caller gets a 502/504 at once (never a hang), the proxy reports nothing
// more and stops heartbeating, the operation turns `unknown` when its lease ends, and no retry
// sends the write again (docs/proxy.md, docs/retry-contract.md). An answer that grows past
// --max-response is no failure: the caller gets it streamed through and the write is completed,
// without the body; only one that then breaks off is, the same as below the limit.
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
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

/**
 * A write whose answer may break off after its status and headers were passed on (streamed, over
 * --max-response): what reached the caller, and whether its body ended or broke off.
 */
async function streamedCall(route: string, key: string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; bytes: number; brokeOff: boolean }> {
  const res = await fetch(env.proxy.url + route, {
    method: 'POST', headers: { 'idempotency-key': key, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ title: 'x' }), signal: AbortSignal.timeout(TIMEOUT_MS + 10_000),
  });
  const reader = res.body!.getReader();
  let bytes = 0;
  for (;;) {
    let piece: ReadableStreamReadResult<Uint8Array>;
    try {
      piece = await reader.read();
    } catch {
      return { status: res.status, headers: res.headers, bytes, brokeOff: true };
    }
    if (piece.done) return { status: res.status, headers: res.headers, bytes, brokeOff: false };
    bytes += piece.value.length;
  }
}

/**
 * After the 502/504 (or an answer broken off after its headers, `answer` null): nothing more
 * reported, the lease runs out, retries get `unknown`, one upstream request in all.
 */
async function endsUnknown(t: ExecutionContext, route: string, key: string, answer: ProxyAnswer | null, headers: Record<string, string> = {}) {
  const op = (await gateway.findByKey(key))!;
  t.truthy(op, 'the claim is on record');
  if (answer) {
    t.is(answer.headers.get('gatehouse-outcome'), 'unknown');
    t.is(answer.headers.get('gatehouse-operation'), op.id);
    t.is(answer.body.error.operation_id, op.id);
  }
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

// Node's client takes every 1xx as interim but 101, which it hands over as the answer when no
// upgrade happened; with an Upgrade it hands over nothing. Neither is a final answer to the write.
for (const route of ['/switch', '/switch-upgrade']) {
  test.serial(`an upstream 101 (${route}) is no answer: 502 upstream_unknown naming it, never stored, and the operation turns unknown`, async (t) => {
    const key = unique(route.slice(1));
    const { answer, ms } = await timedCall(route, key);
    t.is(answer.status, 502, answer.text);
    t.is(answer.body.error.code, 'upstream_unknown');
    t.is(answer.body.error.upstream_status, 101);
    t.true(ms < TIMEOUT_MS - 1_000, `answered at the 101, not at --timeout (${ms} ms)`);
    await endsUnknown(t, route, key, answer);
  });
}

const MAX_RESPONSE = 1024 * 1024; // the default --max-response

test.serial('an answer over --max-response (2 MiB of chunked JSON) reaches the caller whole, and the operation is completed without its body, not left unknown', async (t) => {
  const key = unique('huge');
  const size = 2 * MAX_RESPONSE;
  const headers = { 'x-size': String(size) };
  const { answer } = await timedCall('/huge', key, headers);
  t.is(answer.status, 201, answer.text.slice(0, 300));
  t.is(answer.text.length, size, 'the whole body, streamed through');
  t.is(answer.body?.pad?.length, size - 11, 'and it is the upstream\'s JSON, intact');
  t.is(answer.headers.get('gatehouse-body-omitted'), 'too-large');
  const op = (await gateway.findByKey(key))!;
  t.is(answer.headers.get('gatehouse-operation'), op.id);
  t.is(op.state, 'succeeded', 'recorded before the caller\'s answer ended');
  t.deepEqual(op.response, { status: 201, headers: { 'content-type': 'application/json', 'gatehouse-body-omitted': 'too-large' } });
  const timeline = await gateway.timeline(op.id);
  t.deepEqual(timeline.map((e) => (e.header as { type: string } | undefined)?.type ?? e.type), ['attempted', 'sent', 'completed']);

  const retry = await call(env.proxy.url, 'POST', '/huge', { key, body: { title: 'x' }, headers });
  t.is(retry.status, 201);
  t.is(retry.headers.get('idempotent-replayed'), 'true');
  t.is(retry.headers.get('gatehouse-body-omitted'), 'too-large');
  t.is(retry.text, '');
  t.is((await env.writes('/huge')).filter((w) => w.headers['idempotency-key'] === key).length, 1, 'never sent twice');
});

test.serial('an answer that breaks off after passing --max-response breaks off for the caller too, and the operation turns unknown, as below the limit', async (t) => {
  const key = unique('huge-reset');
  const size = 3 * MAX_RESPONSE;
  const headers = { 'x-size': String(size), 'x-reset-at': String(1.5 * MAX_RESPONSE) };
  const answer = await streamedCall('/huge', key, headers);
  t.is(answer.status, 201, 'the status and headers were passed on once the limit was passed');
  t.is(answer.headers.get('gatehouse-body-omitted'), 'too-large');
  t.true(answer.brokeOff, 'the caller sees no complete answer, as the proxy saw none');
  t.true(answer.bytes > MAX_RESPONSE && answer.bytes < size, `part of the body came (${answer.bytes} bytes)`);
  await endsUnknown(t, '/huge', key, null, headers);
});

test.serial('a 5xx over --max-response answers 502 upstream_unknown with its status, unread, and the operation turns unknown', async (t) => {
  const key = unique('big-500');
  const headers = { 'x-size': String(2 * MAX_RESPONSE), 'x-status': '500' };
  const { answer } = await timedCall('/big', key, headers);
  t.is(answer.status, 502, answer.text.slice(0, 300));
  t.is(answer.body.error.code, 'upstream_unknown');
  t.is(answer.body.error.upstream_status, 500);
  await endsUnknown(t, '/big', key, answer, headers);
});

test.serial('a caller that leaves during an answer over --max-response: the rest is read and dropped, and the operation is completed without its body', async (t) => {
  const key = unique('huge-left');
  const size = 3 * MAX_RESPONSE;
  const headers = { 'x-size': String(size), 'x-pause-at': String(1.5 * MAX_RESPONSE), 'x-pause-ms': '1000' };
  const leaving = new AbortController();
  const res = await fetch(`${env.proxy.url}/huge`, {
    method: 'POST', headers: { 'idempotency-key': key, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ title: 'x' }), signal: leaving.signal,
  });
  t.is(res.status, 201);
  await res.body!.getReader().read();
  leaving.abort(); // while the upstream pauses mid-body

  const op = await eventually(async () => {
    const found = await gateway.findByKey(key);
    return found && ['succeeded', 'failed', 'unknown'].includes(found.state) ? found : undefined;
  }, `${key} is finished`, TIMEOUT_MS + 5_000);
  t.is(op.state, 'succeeded', 'the outcome does not depend on the caller staying');
  t.deepEqual(op.response, { status: 201, headers: { 'content-type': 'application/json', 'gatehouse-body-omitted': 'too-large' } });
  await env.proxy.process.waitFor(new RegExp(`over --max-response.*"operation_id":"${op.id}".*"body_bytes":${size}`), 10_000, 'stderr');
  const retry = await call(env.proxy.url, 'POST', '/huge', { key, body: { title: 'x' }, headers });
  t.is(retry.status, 201);
  t.is(retry.headers.get('idempotent-replayed'), 'true');
  t.is(retry.headers.get('gatehouse-body-omitted'), 'too-large');
  t.is((await env.writes('/huge')).filter((w) => w.headers['idempotency-key'] === key).length, 1);
});

test.serial('a caller that stops reading an answer over --max-response holds it only until --timeout: the operation turns unknown, its answer breaks off', async (t) => {
  const key = unique('huge-stalled');
  const size = 32 * MAX_RESPONSE; // more than the sockets between the upstream, the proxy and the caller hold
  const headers = { 'x-size': String(size) };
  const caller = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(`${env.proxy.url}/huge`, {
      method: 'POST', headers: { 'idempotency-key': key, 'content-type': 'application/json', ...headers },
    }, (res) => {
      res.pause(); // it reads nothing more: the proxy's writes back up to the upstream
      resolve(res);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ title: 'x' }));
  });
  t.is(caller.statusCode, 201);
  // The write no longer waits on the caller once --timeout passed: heartbeats stop, the lease ends.
  await endsUnknown(t, '/huge', key, null, headers);
  const complete = await new Promise<boolean>((resolve) => {
    caller.on('error', () => {});
    caller.on('close', () => resolve(caller.complete));
    caller.resume();
  });
  t.false(complete, 'reading at last, the caller finds its answer broken off');
});

test.serial('an answer that stops mid-body answers 504 upstream_unknown at --timeout, and the operation turns unknown', async (t) => {
  const key = unique('stall');
  const { answer, ms } = await timedCall('/stall', key);
  t.is(answer.status, 504, answer.text);
  t.is(answer.body.error.code, 'upstream_unknown');
  t.true(ms >= TIMEOUT_MS - 500, `not before --timeout (${ms} ms)`);
  await endsUnknown(t, '/stall', key, answer);
});
