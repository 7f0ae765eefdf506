// The retry drills through `gatehouse proxy`, every part a real process: the test upstream,
// `gatehouse serve` on SQLite, and the proxy (docs/proxy.md).
import test from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { GatehouseClient } from '../../src/client/index.js';
import { startScript } from '../helpers/server-process.js';
import { approveOnPage } from './approve-on-page.js';
import { call, eventually, startProxyEnv, type ProxyEnv } from './env.js';

const POLICIES = { policies: [{ method: 'POST', route: '/payments', approval: { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 3600 } }] };

let env: ProxyEnv;
let gateway: GatehouseClient;
test.before(async () => {
  env = await startProxyEnv({ config: POLICIES, proxyArgs: ['--max-body', '64kb', '--max-response', '32kb'] });
  gateway = new GatehouseClient({ baseUrl: env.gatehouse.url, apiKey: env.gatewayKey });
});
test.after.always(async () => env?.close());

let n = 0;
const unique = (name: string) => `${name}-${++n}-${Date.now()}`;

test.serial('30 concurrent identical POSTs with one key make one upstream write; every answer is the write, in_progress or its replay', async (t) => {
  const key = unique('concurrent');
  const answers = await Promise.all(Array.from({ length: 30 }, () =>
    call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'printer on fire' }, headers: { 'x-delay-ms': '300' } })));
  t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 1, 'one write reached the upstream');
  const created = answers.filter((a) => a.headers.get('gatehouse-outcome') === 'created');
  t.is(created.length, 1);
  t.is(created[0]!.status, 201);
  for (const a of answers) {
    if (a.status === 409) {
      t.is(a.body.outcome, 'in_progress');
      t.is(a.headers.get('retry-after'), '1', 'a short hint, not the lease');
    } else {
      t.is(a.status, 201, a.text);
      t.is(a.body.id, created[0]!.body.id);
    }
  }
  const retry = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'printer on fire' } });
  t.is(retry.status, 201);
  t.is(retry.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(retry.body, created[0]!.body);
  t.is(retry.headers.get('location'), created[0]!.headers.get('location'), 'stored headers are replayed');
  t.is(retry.headers.get('set-cookie'), null, 'a cookie the upstream set for one caller is never replayed to another');
  t.not(created[0]!.headers.get('set-cookie'), null, 'the first answer is the upstream\'s own');
});

test.serial('the answer lost on the way back (the client hangs up): the retry replays it, no second write', async (t) => {
  const key = unique('lost');
  const abort = new AbortController();
  const first = call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'lost' }, headers: { 'x-delay-ms': '1500' }, signal: abort.signal });
  await eventually(async () => ((await env.writes('/tickets')).some((w) => w.headers['idempotency-key'] === key) ? true : undefined), 'the write reached the upstream');
  abort.abort();
  await t.throwsAsync(first, { any: true });
  const replay = await eventually(async () => {
    const r = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'lost' } });
    return r.status === 409 && r.body.outcome === 'in_progress' ? undefined : r;
  }, 'the retry stops answering in_progress');
  t.is(replay.status, 201);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.received.title, 'lost');
  t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 1);
});

test.serial('a changed body with the same key answers 422 fingerprint_mismatch and writes nothing', async (t) => {
  const key = unique('changed');
  t.is((await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'one' } })).status, 201);
  const other = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'two' } });
  t.is(other.status, 422);
  t.is(other.body.error.code, 'fingerprint_mismatch');
  t.false(other.text.includes('one'), 'nothing stored is echoed');
  t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 1);
});

test.serial('422 fingerprint_mismatch names the operation in Gatehouse-Operation, while the first write runs and after it', async (t) => {
  const key = unique('mismatch-header');
  const first = call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'one' }, headers: { 'x-delay-ms': '1500' } });
  await eventually(async () => ((await env.writes('/tickets')).some((w) => w.headers['idempotency-key'] === key) ? true : undefined), 'the write reached the upstream');
  const op = (await gateway.findByKey(key))!;
  const during = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'two' } });
  t.is(during.status, 422, during.text);
  t.is(during.body.error.operation_id, op.id);
  t.is(during.headers.get('gatehouse-outcome'), 'fingerprint_mismatch');
  t.is(during.headers.get('gatehouse-operation'), op.id);
  t.is((await first).status, 201);
  const after = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'two' } });
  t.is(after.status, 422, after.text);
  t.is(after.body.error.operation_id, op.id);
  t.is(after.headers.get('gatehouse-outcome'), 'fingerprint_mismatch');
  t.is(after.headers.get('gatehouse-operation'), op.id);
  t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 1);
});

test.serial('an upstream 4xx is completed as failed, stored and replayed, never re-sent', async (t) => {
  const key = unique('refused');
  const first = await call(env.proxy.url, 'POST', '/refuse', { key, body: { title: '' } });
  t.is(first.status, 422);
  t.is(first.body.error, 'invalid_title');
  const again = await call(env.proxy.url, 'POST', '/refuse', { key, body: { title: '' } });
  t.is(again.status, 422);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  t.is((await env.writes('/refuse')).filter((w) => w.headers['idempotency-key'] === key).length, 1);
  const op = await gateway.findByKey(key);
  t.is(op?.state, 'failed');
  t.is(op?.response?.status, 422);
});

test.serial('a GET passes through untouched and makes no operation; hop-by-hop headers stop at the proxy', async (t) => {
  const key = unique('get');
  const res = await call(env.proxy.url, 'GET', '/things/1?b=2&a=1', { key, headers: { 'x-trace': 'abc' } });
  t.is(res.status, 200);
  t.is(res.headers.get('x-upstream'), 'yes');
  t.is(res.headers.get('x-hop-secret'), null, 'a header the upstream\'s Connection named is hop-by-hop');
  t.is(res.body.echo.url, '/things/1?b=2&a=1', 'path and query unchanged');
  t.is(res.body.echo.headers['x-trace'], 'abc');
  t.is(res.headers.get('gatehouse-outcome'), null);
  t.is(await gateway.findByKey(key), null, 'no operation');
});

test.serial('hop-by-hop request headers are removed on the way up; Idempotency-Key and Agent-Run-Id are kept and recorded', async (t) => {
  const key = unique('hop');
  const body = JSON.stringify({ title: 'hop' });
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(`${env.proxy.url}/tickets`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', 'content-length': String(body.length), 'idempotency-key': key, 'agent-run-id': 'run-77',
        connection: 'keep-alive, x-drop-me', 'x-drop-me': 'secret', 'proxy-authorization': 'Basic c2VjcmV0', te: 'trailers', 'x-keep-me': 'yes',
      },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
  t.is(status, 201);
  const seen = (await env.writes('/tickets')).find((w) => w.headers['idempotency-key'] === key)!;
  t.is(seen.headers['x-keep-me'], 'yes');
  for (const name of ['x-drop-me', 'proxy-authorization', 'te']) t.false(name in seen.headers, name);
  t.is(seen.headers['agent-run-id'], 'run-77');
  t.is((await gateway.findByKey(key))?.agent_run_id, 'run-77');
});

test.serial('an upstream redirect reaches the client as it is, not followed, and is replayed', async (t) => {
  const key = unique('redirect');
  const before = (await env.writes('/items')).length;
  const first = await call(env.proxy.url, 'POST', '/redirect', { key, body: { go: true } });
  t.is(first.status, 303);
  t.is(first.headers.get('location'), '/items/1');
  const again = await call(env.proxy.url, 'POST', '/redirect', { key, body: { go: true } });
  t.is(again.status, 303);
  t.is(again.headers.get('location'), '/items/1');
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.is((await env.writes('/items')).length, before, 'the proxy never followed it');
});

test.serial('requests the proxy cannot gate are refused with clear codes before anything is claimed', async (t) => {
  const noKey = await call(env.proxy.url, 'POST', '/tickets', { body: { title: 'x' } });
  t.is(noKey.status, 400);
  t.is(noKey.body.error.code, 'idempotency_key_required');
  const key = unique('refusals');
  const form = await call(env.proxy.url, 'POST', '/tickets', { key, rawBody: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.is(form.status, 415);
  t.is(form.body.error.code, 'unsupported_media_type');
  const dup = await call(env.proxy.url, 'POST', '/tickets', { key, rawBody: '{"title":"a","title":"b"}' });
  t.is(dup.status, 400);
  t.is(dup.body.error.code, 'duplicate_member');
  const route = await call(env.proxy.url, 'POST', '/tickets//x', { key, body: {} });
  t.is(route.status, 400);
  t.is(route.body.error.code, 'invalid_route');
  const declared = await call(env.proxy.url, 'POST', '/tickets', { key, body: { pad: 'x'.repeat(70_000) } });
  t.is(declared.status, 413);
  t.is(declared.body.error.code, 'payload_too_large');
  async function* chunks() {
    for (let i = 0; i < 20; i++) yield new TextEncoder().encode(i === 0 ? '{"pad":"' : 'y'.repeat(8_000));
  }
  const streamed = await fetch(`${env.proxy.url}/tickets`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: chunks(), duplex: 'half',
  } as unknown as RequestInit);
  t.is(streamed.status, 413, 'a chunked body over the limit gets an answer, not a reset');
  t.is(((await streamed.json()) as { error: { code: string } }).error.code, 'payload_too_large');
  t.is(await gateway.findByKey(key), null, 'nothing was claimed');
  t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 0);
});

test.serial('a trailing-slash path (as Django-style APIs spell them) is gated under its route, sent as it was, and never one request with the path without it', async (t) => {
  const key = unique('slash');
  const first = await call(env.proxy.url, 'POST', '/tickets/?notify=ops', { key, body: { title: 's' } });
  t.is(first.status, 201, JSON.stringify(first.body));
  t.is(first.body.path, '/tickets/', 'the upstream gets the path as it was sent');
  t.is(first.body.query, '?notify=ops');
  const op = (await gateway.findByKey(key))!;
  t.is(op.route, '/tickets');
  t.is(op.fingerprint, await gateway.fingerprint({ method: 'POST', route: '/tickets', command: { body: { title: 's' }, query: { notify: ['ops'] }, path: '/tickets/' } }));
  const again = await call(env.proxy.url, 'POST', '/tickets/?notify=ops', { key, body: { title: 's' } });
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 1, 'one write');
  const withoutSlash = await call(env.proxy.url, 'POST', '/tickets?notify=ops', { key, body: { title: 's' } });
  t.is(withoutSlash.status, 422, 'the path without the slash is another request');
});

test.serial('the query string enters the fingerprint by the documented rule: {"body", "query"}, order of names does not matter', async (t) => {
  const key = unique('query');
  const first = await call(env.proxy.url, 'POST', '/tickets?notify=ops&b=2&notify=dev', { key, body: { title: 'q' } });
  t.is(first.status, 201);
  t.is(first.body.query, '?notify=ops&b=2&notify=dev', 'the upstream gets the query as it was sent');
  const op = (await gateway.findByKey(key))!;
  t.is(op.route, '/tickets');
  t.is(op.fingerprint, await gateway.fingerprint({ method: 'POST', route: '/tickets', command: { body: { title: 'q' }, query: { b: ['2'], notify: ['ops', 'dev'] } } }));
  const reordered = await call(env.proxy.url, 'POST', '/tickets?b=2&notify=ops&notify=dev', { key, body: { title: 'q' } });
  t.is(reordered.status, 201);
  t.is(reordered.headers.get('idempotent-replayed'), 'true');
  const changed = await call(env.proxy.url, 'POST', '/tickets?b=3&notify=ops&notify=dev', { key, body: { title: 'q' } });
  t.is(changed.status, 422, 'another query is another request');
  const dropped = await call(env.proxy.url, 'POST', '/tickets', { key, body: { title: 'q' } });
  t.is(dropped.status, 422, 'the query is never silently dropped');
  const wrapperKey = unique('query-wrapper');
  t.is((await call(env.proxy.url, 'POST', '/tickets', { key: wrapperKey, body: { body: { title: 'q' }, query: { b: ['2'], notify: ['ops', 'dev'] } } })).status, 201);
  t.not((await gateway.findByKey(wrapperKey))!.fingerprint, op.fingerprint, 'a body that looks like the wrapper is not that request');
});

for (const { status, state } of [{ status: 201, state: 'succeeded' }, { status: 422, state: 'failed' }] as const) {
  test.serial(`an upstream ${status} over --max-response reaches the caller whole and is completed ${state} without its body; a retry replays it marked, never re-sent`, async (t) => {
    const key = unique(`over-max-response-${status}`);
    const bytes = 100_000; // over this proxy's --max-response, 32kb
    const headers = { 'x-size': String(bytes), 'x-fill': 'binary', 'x-status': String(status) };
    const first = await call(env.proxy.url, 'POST', '/big', { key, body: {}, headers });
    t.is(first.status, status, first.text.slice(0, 300));
    t.is(first.headers.get('content-length'), String(bytes), 'the upstream\'s own length: the body passes byte for byte');
    t.is(first.text.length, bytes, 'the whole body (each byte one replacement character once decoded)');
    t.is(first.headers.get('gatehouse-body-omitted'), 'too-large', 'the caller is told a retry will not get the body back');
    t.is(first.headers.get('gatehouse-outcome'), 'created');
    t.is(first.headers.get('location'), '/items/big');

    const op = (await gateway.findByKey(key))!;
    t.is(first.headers.get('gatehouse-operation'), op.id);
    t.is(op.state, state, 'completed by the time the caller has the whole answer, not left to become unknown');
    t.deepEqual(op.response, {
      status,
      headers: { 'content-type': 'application/octet-stream', location: '/items/big', etag: `"big-${bytes}"`, 'gatehouse-body-omitted': 'too-large' },
    });

    const retry = await call(env.proxy.url, 'POST', '/big', { key, body: {}, headers });
    t.is(retry.status, status);
    t.is(retry.headers.get('idempotent-replayed'), 'true');
    t.is(retry.headers.get('gatehouse-body-omitted'), 'too-large', 'the replay says its body was not kept');
    t.is(retry.headers.get('location'), '/items/big');
    t.is(retry.text, '');
    t.is((await env.writes('/big')).filter((w) => w.headers['idempotency-key'] === key).length, 1, 'never sent twice');
    await env.proxy.process.waitFor(new RegExp(`over --max-response.*"operation_id":"${op.id}".*"body_bytes":${bytes}`), 10_000, 'stderr');
  });
}

test.serial('an agent that restarts and retries with its stored key gets the replay, not a second write', async (t) => {
  const keyFile = path.join(env.tmp, `agent-${Date.now()}.key`);
  const args = ['--proxy', env.proxy.url, '--key-file', keyFile, '--path', '/tickets', '--body', JSON.stringify({ title: 'from the agent' })];
  const first = startScript('test/proxy/agent-script.ts', [...args, '--delay-ms', '2000']);
  const [, key] = await first.waitFor(/key: (\S+)/, 30_000);
  await eventually(async () => ((await env.writes('/tickets')).some((w) => w.headers['idempotency-key'] === key) ? true : undefined), 'the agent\'s write reached the upstream');
  await first.kill9(); // the agent dies before it reads the answer
  const second = startScript('test/proxy/agent-script.ts', args);
  const [, answer] = await second.waitFor(/answer: (.+)/, 45_000);
  const parsed = JSON.parse(answer!) as { status: number; replayed: boolean; body: { received: { title: string } } };
  t.is(second.stdout.match(/key: (\S+)/)?.[1], key, 'the restarted agent found its key');
  t.is(parsed.status, 201);
  t.true(parsed.replayed);
  t.is(parsed.body.received.title, 'from the agent');
  t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 1);
});

test.serial('heartbeats keep a long upstream call\'s lease alive: a 6-s write under a 2-s lease succeeds and is replayed', async (t) => {
  const shortLease = await env.startProxy(['--lease', '2s']);
  t.teardown(() => shortLease.process.stop());
  const key = unique('long');
  const first = await call(shortLease.url, 'POST', '/tickets', { key, body: { title: 'slow' }, headers: { 'x-delay-ms': '6000' } });
  t.is(first.status, 201, first.text);
  t.is(first.headers.get('gatehouse-outcome'), 'created');
  t.is((await gateway.findByKey(key))?.state, 'succeeded', 'completed on the lease the heartbeats kept');
  const again = await call(shortLease.url, 'POST', '/tickets', { key, body: { title: 'slow' } });
  t.is(again.headers.get('idempotent-replayed'), 'true');
});

test.serial('approval end to end: 202 with the page URL, approved on the page, the retry is forwarded once', async (t) => {
  const key = unique('pay');
  const payment = { amount: 125_000, currency: 'EUR', to: 'Supplier GmbH' };
  const asked = await call(env.proxy.url, 'POST', '/payments', { key, body: payment });
  t.is(asked.status, 202);
  t.is(asked.body.outcome, 'approval_required');
  const approvalId = asked.body.approval.id as string;
  t.is(asked.headers.get('location'), `${env.gatehouse.url}/ui/approvals/${approvalId}`);
  t.is(asked.body.approval_url, asked.headers.get('location'));
  t.is((await call(env.proxy.url, 'POST', '/payments', { key, body: payment })).status, 202, 'still pending');
  t.is((await env.writes('/payments')).length, 0, 'nothing is sent before the approval');

  await approveOnPage(env.gatehouse.url, env.approverKey, approvalId, 'invoice 1182 matches the order');
  const approved = await call(env.proxy.url, 'POST', '/payments', { key, body: payment });
  t.is(approved.status, 201, approved.text);
  t.is(approved.headers.get('gatehouse-outcome'), 'approved', 'the claim\'s outcome, as docs/proxy.md says');
  t.is(approved.headers.get('gatehouse-operation'), asked.body.operation.id);
  t.deepEqual(approved.body.received, payment);
  const replay = await call(env.proxy.url, 'POST', '/payments', { key, body: payment });
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is((await env.writes('/payments')).length, 1, 'forwarded once');
  const changed = await call(env.proxy.url, 'POST', '/payments', { key, body: { ...payment, amount: 999_999 } });
  t.is(changed.status, 422, 'the grant covers that one command only');
});

test.serial('a grant that does not check out against the pinned keys: 502 grant_invalid naming the operation, nothing sent, canceled', async (t) => {
  const key = unique('pay-wrong-keys');
  const payment = { amount: 310, currency: 'EUR', to: 'Other GmbH' };
  const asked = await call(env.proxy.url, 'POST', '/payments', { key, body: payment });
  t.is(asked.status, 202, asked.text);
  await approveOnPage(env.gatehouse.url, env.approverKey, asked.body.approval.id as string, 'approved, then sent through a misconfigured proxy');
  // The service's key id, another Ed25519 public key: the grant's signature cannot verify.
  const [pinned] = JSON.parse(readFileSync(env.keysFile, 'utf8')).keys as Array<{ key_id: string }>;
  const stranger = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
  const wrongKeys = path.join(env.tmp, `wrong-keys-${Date.now()}.json`);
  writeFileSync(wrongKeys, JSON.stringify({ keys: [{ key_id: pinned!.key_id, public_key: stranger }] }));
  const misconfigured = await env.startProxy(['--keys', wrongKeys]);
  t.teardown(() => misconfigured.process.stop());

  const refused = await call(misconfigured.url, 'POST', '/payments', { key, body: payment });
  t.is(refused.status, 502, refused.text);
  t.is(refused.body.error.code, 'grant_invalid');
  t.is(refused.body.error.operation_id, asked.body.operation.id);
  t.is(refused.headers.get('gatehouse-operation'), asked.body.operation.id);
  t.is(refused.headers.get('gatehouse-outcome'), 'approved');
  t.is((await gateway.findByKey(key))?.state, 'canceled', 'the lease was given back: nothing was sent');
  t.is((await env.writes('/payments')).filter((w) => w.headers['idempotency-key'] === key).length, 0);
});

test.serial('a denial answers 403 with Gatehouse\'s own outcome body: the approval, its decisions and reason, included', async (t) => {
  const key = unique('pay-denied');
  const payment = { amount: 9_999, currency: 'EUR', to: 'Unknown Ltd' };
  const asked = await call(env.proxy.url, 'POST', '/payments', { key, body: payment });
  t.is(asked.status, 202, asked.text);
  const approver = new GatehouseClient({ baseUrl: env.gatehouse.url, apiKey: env.approverKey });
  await approver.decide(asked.body.approval.id, { decision: 'deny', fingerprint: asked.body.operation.fingerprint, reason: 'no invoice for this' });
  const denied = await call(env.proxy.url, 'POST', '/payments', { key, body: payment });
  t.is(denied.status, 403, denied.text);
  t.is(denied.headers.get('gatehouse-outcome'), 'denied');
  t.is(denied.body.outcome, 'denied');
  t.is(denied.body.approval?.state, 'denied', denied.text);
  t.is(denied.body.approval.decisions[0].reason, 'no invoice for this');
  const own = await gateway.claim(key, { method: 'POST', route: '/payments', command: payment });
  t.deepEqual(denied.body.approval, own.outcome === 'denied' ? own.approval : 'Gatehouse answered denied');
  t.is((await env.writes('/payments')).filter((w) => w.headers['idempotency-key'] === key).length, 0);
});

test.serial('answers without content (204, 304, any answer to HEAD) get no Content-Length of the proxy\'s, first or replayed', async (t) => {
  for (const [route, status] of [['/no-content', 204], ['/not-modified', 304]] as const) {
    const key = unique(route.slice(1));
    const first = await call(env.proxy.url, 'POST', route, { key, body: {} });
    const replay = await call(env.proxy.url, 'POST', route, { key, body: {} });
    t.is(replay.headers.get('idempotent-replayed'), 'true');
    for (const answer of [first, replay]) {
      t.is(answer.status, status);
      t.is(answer.headers.get('content-length'), null, `a ${status} has no content: a length of 0 would be false`);
      t.truthy(answer.headers.get('etag'));
    }
  }
  // HEAD is gated only by a routes file. Its Content-Length is the length a GET would carry: the upstream's, never 0.
  const routes = path.join(env.tmp, `head-routes-${Date.now()}.json`);
  writeFileSync(routes, JSON.stringify({ routes: [{ method: 'HEAD', route: '/things/*', gated: true }] }));
  const heads = await env.startProxy(['--routes', routes]);
  t.teardown(() => heads.process.stop());
  const key = unique('head');
  const first = await call(heads.url, 'HEAD', '/things/1', { key });
  t.is(first.status, 200);
  t.is(first.headers.get('gatehouse-outcome'), 'created');
  t.true(Number(first.headers.get('content-length')) > 0, `the upstream's length, not the empty body's: ${first.headers.get('content-length')}`);
  const replay = await call(heads.url, 'HEAD', '/things/1', { key });
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.headers.get('content-length'), null, 'a replay does not know the length, so it says none');
});

test.serial('a routes file whose later entry an earlier one covers starts, warns naming both, and the first match wins', async (t) => {
  const routes = path.join(env.tmp, `shadowed-routes-${Date.now()}.json`);
  writeFileSync(routes, JSON.stringify({ routes: [{ method: 'POST', route: '/tickets', gated: false }, { method: 'POST', route: '/tickets', gated: true }] }));
  const proxy = await env.startProxy(['--routes', routes]);
  t.teardown(() => proxy.process.stop());
  t.regex(proxy.process.stderr, /gatehouse proxy: warning: .*routes\[1\] \(POST \/tickets\) can never apply: routes\[0\] \(POST \/tickets\)/);
  const key = unique('shadowed');
  const passed = await call(proxy.url, 'POST', '/tickets', { key, body: { title: 'ungated' } });
  t.is(passed.status, 201);
  t.is(passed.headers.get('gatehouse-outcome'), null, 'passed through, not gated');
  t.is(await gateway.findByKey(key), null, 'nothing was claimed');
});

test.serial('a client that hangs up mid-body is not an internal error: one short line, nothing claimed, nothing sent', async (t) => {
  const key = unique('hang-up');
  const socket = net.connect(env.proxy.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`POST /tickets HTTP/1.1\r\nhost: proxy\r\ncontent-type: application/json\r\nidempotency-key: ${key}\r\ncontent-length: 1000\r\n\r\n{"title":"`);
  await new Promise((r) => setTimeout(r, 200)); // the proxy is reading the body
  socket.destroy();
  const [line] = await env.proxy.process.waitFor(/gatehouse proxy: a client left .*\n/, 10_000, 'stderr');
  t.false(line!.includes('Error'), `no stack for what is no bug: ${line}`);
  t.false(env.proxy.process.stderr.includes('internal error'), env.proxy.process.stderr);
  t.is(await gateway.findByKey(key), null, 'nothing was claimed');
  t.is((await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length, 0);
});
