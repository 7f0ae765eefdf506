// The body limits of `gatehouse proxy` against Gatehouse's own, every part a real process with
// the shipped defaults (docs/proxy.md, limits). A gated body travels to Gatehouse inside the
// claim, so the claim is larger than the body: a body the proxy accepts must fit under the
// service's default limit, and when a deployment's limits do not fit, the answer says so truly.
// The upstream's answer travels inside the `completed` report, encoded as JSON (base64 for bytes,
// and for text JSON would escape to more), so an answer under --max-response may not fit either:
// the write's outcome is still recorded, without the body, and replays say so.
import test from 'ava';
import { GatehouseClient } from '../../src/client/index.js';
import { parseByteSize } from '../../src/config/byte-size.js';
import { DEFAULT_MAX_BODY } from '../../src/proxy/options.js';
import { call, startProxyEnv, type ProxyEnv } from './env.js';

const SERVE_DEFAULT_MAX_BODY = 1024 * 1024; // docs/cli.md, gatehouse serve --max-body
const PROXY_MAX_BODY = parseByteSize(DEFAULT_MAX_BODY);

let env: ProxyEnv;
let gateway: GatehouseClient;
test.before(async () => {
  env = await startProxyEnv();
  gateway = new GatehouseClient({ baseUrl: env.gatehouse.url, apiKey: env.gatewayKey });
});
test.after.always(async () => env?.close());

let n = 0;
const unique = (name: string) => `${name}-${++n}-${Date.now()}`;
/** A JSON body of exactly `bytes` bytes. */
const bodyOf = (bytes: number) => `{"pad":"${'x'.repeat(bytes - 10)}"}`;
const writesWith = async (key: string) => (await env.writes('/tickets')).filter((w) => w.headers['idempotency-key'] === key).length;

test.serial('with the shipped defaults, a body at the proxy\'s --max-body is claimed and forwarded, query and agent run included', async (t) => {
  t.true(PROXY_MAX_BODY < SERVE_DEFAULT_MAX_BODY, 'the proxy leaves room for the claim around the body');
  const key = unique('at-limit');
  const query = `?${Array.from({ length: 50 }, (_, i) => `tag${i}=${'%22'.repeat(20)}`).join('&')}`;
  const answer = await call(env.proxy.url, 'POST', `/tickets${query}`, {
    key, rawBody: bodyOf(PROXY_MAX_BODY), headers: { 'agent-run-id': 'r'.repeat(255) },
  });
  t.is(answer.status, 201, answer.text.slice(0, 300));
  t.is(await writesWith(key), 1);

  const overKey = unique('over-limit');
  const over = await call(env.proxy.url, 'POST', '/tickets', { key: overKey, rawBody: bodyOf(PROXY_MAX_BODY + 1) });
  t.is(over.status, 413);
  t.is(over.body.error.code, 'payload_too_large');
  t.true(over.body.error.message.includes(String(PROXY_MAX_BODY)), over.body.error.message);
  t.is(await gateway.findByKey(overKey), null);
});

test.serial('a proxy whose --max-body passes Gatehouse\'s answers 413 naming both limits and the fix; nothing is claimed', async (t) => {
  const roomy = await env.startProxy(['--max-body', '2mb']);
  t.teardown(() => roomy.process.stop());
  const key = unique('too-large-claim');
  const bytes = SERVE_DEFAULT_MAX_BODY + 1000;
  const answer = await call(roomy.url, 'POST', '/tickets', { key, rawBody: bodyOf(bytes) });
  t.is(answer.status, 413, answer.text);
  t.is(answer.body.error.code, 'payload_too_large');
  const message = answer.body.error.message as string;
  t.true(message.includes(`${bytes} bytes`), message);
  t.true(message.includes(String(2 * 1024 * 1024)), `the proxy's limit: ${message}`);
  t.true(message.includes(String(SERVE_DEFAULT_MAX_BODY)), `Gatehouse's limit: ${message}`);
  t.true(message.includes('gatehouse serve --max-body') && message.includes('gatehouse proxy --max-body'), `the fix: ${message}`);
  t.is(await gateway.findByKey(key), null, 'nothing claimed: the key is unused');
  t.is(await writesWith(key), 0);
  await roomy.process.waitFor(/Gatehouse refused a claim as too large/, 10_000, 'stderr');
});

/** An answer under the proxy's --max-response whose JSON form in the `completed` report is over Gatehouse's --max-body. */
for (const { fill, bytes, stored } of [
  { fill: 'binary', bytes: 800_000, stored: 'base64, a third larger' },
  { fill: 'control', bytes: 800_000, stored: 'control characters, base64 too rather than escaped six times over' },
]) {
  test.serial(`an answer too large to store once encoded (${bytes} bytes, ${fill}: ${stored}) is recorded without its body, never left unknown`, async (t) => {
    const key = unique(`big-${fill}`);
    const headers = { 'x-size': String(bytes), 'x-fill': fill };
    const first = await call(env.proxy.url, 'POST', '/big', { key, body: {}, headers });
    t.is(first.status, 201, first.text.slice(0, 300));
    t.is(first.headers.get('content-length'), String(bytes), 'the caller that made the write gets the whole answer');
    t.is(first.text.length, bytes);

    const op = (await gateway.findByKey(key))!;
    t.is(op.state, 'succeeded', 'the write\'s outcome is known: recorded, not left to become unknown');
    t.is(first.headers.get('gatehouse-body-omitted'), 'too-large', 'the caller is told a retry will not get the body back');
    t.deepEqual(op.response, {
      status: 201,
      headers: { 'content-type': first.headers.get('content-type')!, location: '/items/big', etag: `"big-${bytes}"`, 'gatehouse-body-omitted': 'too-large' },
    });

    const retry = await call(env.proxy.url, 'POST', '/big', { key, body: {}, headers });
    t.is(retry.status, 201, retry.text.slice(0, 300));
    t.is(retry.headers.get('idempotent-replayed'), 'true');
    t.is(retry.headers.get('gatehouse-body-omitted'), 'too-large', 'the replay says its body was not kept');
    t.is(retry.headers.get('location'), '/items/big');
    t.is(retry.text, '');
    t.is((await env.writes('/big')).filter((w) => w.headers['idempotency-key'] === key).length, 1, 'never sent twice');
    await env.proxy.process.waitFor(new RegExp(`too large to store.*"operation_id":"${op.id}"`), 10_000, 'stderr');
  });
}

test.serial('text that JSON escapes would make too large is stored as base64, whole (300,000 control characters)', async (t) => {
  const key = unique('control-base64');
  const bytes = 300_000; // 1.8 MB escaped (\u0001), 400 KB as base64
  const headers = { 'x-size': String(bytes), 'x-fill': 'control' };
  const first = await call(env.proxy.url, 'POST', '/big', { key, body: {}, headers });
  t.is(first.status, 201, first.text.slice(0, 300));
  t.is(first.headers.get('gatehouse-body-omitted'), null);
  const op = (await gateway.findByKey(key))!;
  t.is(op.state, 'succeeded');
  t.is(op.response?.headers?.['gatehouse-body-encoding'], 'base64');
  const retry = await call(env.proxy.url, 'POST', '/big', { key, body: {}, headers });
  t.is(retry.headers.get('idempotent-replayed'), 'true');
  t.is(retry.headers.get('gatehouse-body-omitted'), null, 'the body was kept');
  t.is(retry.text, '\x01'.repeat(bytes), 'replayed byte for byte');
});
