import test from 'ava';
import { startTestApp } from '../helpers/app.js';

// Every module's routes sit in one router (src/http/app.ts): these hold the answers that used to
// come from each module's own router.

test('[sqlite] a route answers its own method, and another method on it is 405 method_not_allowed naming the methods it takes', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  const listed = await app.request('GET', '/v1/operations', { key: gw });
  t.is(listed.status, 200);
  const refused = await fetch(`${app.url}/v1/operations`, { method: 'DELETE', headers: { authorization: `Bearer ${gw}` } });
  t.is(refused.status, 405);
  t.is(((await refused.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
  t.deepEqual(refused.headers.get('allow')?.split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
});

test('[sqlite] OPTIONS is a method no route serves: 405 method_not_allowed as JSON with the Allow header, not an empty 200', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  const asked = await fetch(`${app.url}/v1/operations`, { method: 'OPTIONS', headers: { authorization: `Bearer ${gw}` } });
  t.is(asked.status, 405);
  t.is(((await asked.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
  t.deepEqual(asked.headers.get('allow')?.split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
  // A path that needs no key, and one only admins may read: the same answer to any key.
  t.is((await fetch(`${app.url}/v1/keys`, { method: 'OPTIONS' })).status, 405);
  t.is((await fetch(`${app.url}/metrics`, { method: 'OPTIONS', headers: { authorization: `Bearer ${gw}` } })).status, 405);
});

test('[sqlite] an unknown path is 404 not_found, under /v1 and at the top, and a route of another module still answers', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  const unknown = await app.request('GET', '/v1/no-such-route', { key: gw });
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'not_found');
  t.is((await app.request('GET', '/v1/healthz')).status, 200);
  t.is((await app.request('GET', '/v1/openapi.json', { key: gw })).status, 200);
  // The pages' own fallback still answers their unknown paths, as a page.
  const page = await fetch(`${app.url}/ui/no-such-page`);
  t.is(page.status, 404);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
});

test('[sqlite] request latency is labelled by the matched route template, never by an id', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  // A matched API route's error stays the API's JSON: the pages' error middleware is the pages' alone.
  const missing = await app.request('GET', '/v1/operations/op_does_not_exist', { key: gw });
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'not_found');
  const metrics = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${app.adminKey}` } });
  const text = await metrics.text();
  t.regex(text, /gatehouse_http_request_duration_seconds_count\{[^}]*route="\/v1\/operations\/:id"[^}]*\}/);
  t.notRegex(text, /op_does_not_exist/);
});

test('[sqlite] a path is matched as the contract spells it: other letter case or a trailing slash is 404 not_found, with a key or without', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  t.is((await app.request('GET', '/v1/operations', { key: gw })).status, 200);
  t.is((await app.request('GET', '/v1/healthz')).status, 200);
  t.is((await app.request('GET', '/v1/keys')).status, 200);
  for (const path of ['/V1/operations', '/v1/Operations', '/v1/operations/', '/v1/KEYS', '/V1/keys', '/v1/keys/', '/v1/healthz/', '/V1/healthz', '/v1/openapi.json/', '/Metrics', '/metrics/', '/v1/no-such-route']) {
    for (const key of [gw, app.adminKey, undefined]) {
      const answer = await app.request('GET', path, { key });
      t.is(answer.status, 404, `${path} ${key ? 'with' : 'without'} a key: ${answer.text}`);
      t.is(answer.body?.error?.code, 'not_found');
    }
  }
});

test('[sqlite] a known path without a key is 401, whatever the method; a known path with a key and another method is 405', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  t.is((await app.request('GET', '/v1/operations')).status, 401);
  t.is((await app.request('DELETE', '/v1/operations')).status, 401);
  t.is((await app.request('GET', '/v1/operations/op_x')).status, 401);
  t.is((await app.request('GET', '/metrics')).status, 401);
  t.is((await app.request('DELETE', '/v1/operations', { key: app.adminKey })).status, 405);
});

test('[sqlite] the pages are matched the same way: /ui and /ui/login answer, other spellings are unknown', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const home = await fetch(`${app.url}/ui`, { redirect: 'manual' });
  t.is(home.status, 302);
  t.is(home.headers.get('location'), '/ui/login');
  t.is((await fetch(`${app.url}/ui/login`)).status, 200);
  t.is((await fetch(`${app.url}/ui/style.css`)).status, 200);
  const slash = await fetch(`${app.url}/ui/login/`);
  t.is(slash.status, 404);
  t.regex(slash.headers.get('content-type') ?? '', /text\/html/, 'an unknown page under /ui/ is a page');
  t.is((await fetch(`${app.url}/UI/login`)).status, 404);
  t.is((await fetch(`${app.url}/ui/Login`)).status, 404);
});

test('[sqlite] a request refused before its route ran is labelled with the route\'s template; unmatched is only for unknown paths', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  await app.request('GET', '/v1/operations');
  await app.request('DELETE', '/v1/operations', { key: app.adminKey });
  await app.request('GET', '/v1/approvals/apr_x');
  await app.request('GET', '/v1/no-such-route', { key: app.adminKey });
  const text = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${app.adminKey}` } })).text();
  const count = (labels: string) => new RegExp(`gatehouse_http_request_duration_seconds_count\\{${labels}\\} 1`);
  t.regex(text, count('method="GET",route="/v1/operations",status="401"'));
  t.regex(text, count('method="DELETE",route="/v1/operations",status="405"'));
  t.regex(text, count('method="GET",route="/v1/approvals/:id",status="401"'));
  t.regex(text, count('method="GET",route="unmatched",status="404"'));
  t.notRegex(text, /route="unmatched",status="40[15]"/);
});
