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

test('[sqlite] an unknown path is 404 not_found, under /v1 and at the top, and a route of another module still answers', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  const unknown = await app.request('GET', '/v1/no-such-route', { key: gw });
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'not_found');
  t.is((await app.request('GET', '/v1/healthz')).status, 200);
  t.is((await app.request('GET', '/v1/openapi.json')).status, 200);
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
