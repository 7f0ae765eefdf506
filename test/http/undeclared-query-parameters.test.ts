import test from 'ava';
import type Router from '@koa/router';
import { routeModules } from '../../src/http/server.js';
import { ANY_QUERY } from '../../src/http/declared-queries.js';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.js';

/**
 * docs/http-api.md (Conventions): a query parameter the route does not take is refused —
 * `400 invalid_request` naming it, in the message and in `error.parameter` — on every JSON route,
 * those that take no parameter included, before the route does anything. A misspelt parameter
 * silently ignored would answer another question as if it were the one asked.
 */

const ACCOUNT = 'acme';

function refused(t: import('ava').ExecutionContext, res: TestResponse, parameter: string, what: string): void {
  t.is(res.status, 400, `${what}: ${res.text}`);
  t.is(res.body?.error?.code, 'invalid_request', what);
  t.is(res.body?.error?.parameter, parameter, what);
  t.regex(res.body?.error?.message ?? '', new RegExp(`^the query parameter "${parameter}" is not a parameter of this route`), what);
}

/** Every route the service serves under /v1/, as the routers hold it, with its declared query. */
function jsonRoutes(app: TestApp) {
  return routeModules(app.context).flatMap((module) => (module.router as Router).stack.flatMap((layer) => layer.methods
    .filter((method) => method !== 'HEAD' && String(layer.path).startsWith('/v1/'))
    .map((method) => ({ method, path: String(layer.path), declared: module.queries?.[`${method} ${String(layer.path)}`] }))));
}

test('[sqlite] every /v1/ route refuses a query parameter it does not take, naming it', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const routes = jsonRoutes(app);
  t.true(routes.length > 20, `walked ${routes.length} routes`);
  for (const { method, path, declared } of routes) {
    if (declared === ANY_QUERY) continue;
    const res = await app.request(method, `${path.replace(':id', 'x_1')}?not_taken=1`, { key: app.adminKey, body: method === 'POST' ? {} : undefined });
    refused(t, res, 'not_taken', `${method} ${path}`);
    if (declared === undefined) t.regex(res.body.error.message, /, which takes none$/, `${method} ${path}`);
  }
});

test('[sqlite] a refused query parameter is refused before the route does anything', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gateway = await app.keyFor(ACCOUNT, 'gateway');
  const claim = { method: 'POST', route: '/v1/tickets', command: { n: 1 } };
  const asked = await app.request('POST', '/v1/operations?x=1', { key: gateway, body: claim, headers: { 'idempotency-key': 'k-1' } });
  refused(t, asked, 'x', 'a claim');
  t.is(await app.context.store.db.selectFrom('events').select('seq').executeTakeFirst(), undefined, 'nothing recorded');
  // The key was left unused, and an empty query string is no parameter.
  const created = await app.request('POST', '/v1/operations?', { key: gateway, body: claim, headers: { 'idempotency-key': 'k-1' } });
  t.is(created.status, 201, created.text);
  const id = created.body.operation.id as string;
  refused(t, await app.request('GET', `/v1/operations/${id}?x=1`, { key: gateway }), 'x', 'an operation');
  refused(t, await app.request('POST', '/v1/fingerprint?bogus=1', { key: gateway, body: claim }), 'bogus', 'a fingerprint');
  refused(t, await app.request('POST', `/v1/operations/${id}/events?x=1`, { key: gateway, body: { type: 'canceled', lease_token: created.body.lease.token } }), 'x', 'a report');
  t.is((await app.request('GET', `/v1/operations/${id}`, { key: gateway })).body.operation.state, 'running', 'the report was not made');
  // The routes that take parameters still refuse the others, listing theirs.
  const list = await app.request('GET', '/v1/approvals?states=pending', { key: app.adminKey });
  refused(t, list, 'states', 'the approvals list');
  t.regex(list.body.error.message, /\(state, account_id, limit, cursor\)$/);
});

test('[sqlite] the approvals routes refuse a stray parameter too', async (t) => {
  const app = await startTestApp(t, 'sqlite', { policies: { policies: [{ method: 'POST', route: '/payments', approval: { approvers: 1, ttl_seconds: 600 } }] } });
  const gateway = await app.keyFor(ACCOUNT, 'gateway');
  const approver = await app.keyFor(ACCOUNT, 'approver');
  const claim = await app.request('POST', '/v1/operations', { key: gateway, body: { method: 'POST', route: '/payments', command: { amount: 1 } }, headers: { 'idempotency-key': 'p-1' } });
  t.is(claim.status, 202, claim.text);
  const { id } = claim.body.approval;
  refused(t, await app.request('GET', `/v1/approvals/${id}?x=1`, { key: approver }), 'x', 'an approval');
  const decision = { decision: 'approve', fingerprint: claim.body.operation.fingerprint, reason: 'ok' };
  refused(t, await app.request('POST', `/v1/approvals/${id}/decisions?x=1`, { key: approver, body: decision }), 'x', 'a decision');
  t.is((await app.request('GET', `/v1/approvals/${id}`, { key: approver })).body.approval.state, 'pending', 'the decision was not made');
});

test('[sqlite] the answers that come before a query is read still come first', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const noKey = await app.request('GET', '/v1/operations/op_x?x=1');
  t.is(noKey.status, 401, 'no key: 401, as without a query');
  t.is((await app.request('GET', '/v1/nothing?x=1', { key: app.adminKey })).status, 404, 'an unknown path');
  const otherMethod = await app.request('DELETE', '/v1/operations?x=1', { key: app.adminKey });
  t.is(otherMethod.status, 405, 'another method');
  t.is((await app.request('HEAD', '/v1/keys?x=1')).status, 400, 'HEAD is its GET route');
});

test('[sqlite] outside the JSON API, and on the health check, a query is the route\'s own business', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  // Pollers may add a cache-buster; no parameter could change a health answer.
  t.is((await app.request('GET', '/v1/healthz?nocache=17')).status, 200);
  t.is((await app.request('GET', '/metrics?x=1', { key: app.adminKey })).status, 200);
  t.is((await app.request('GET', '/ui/login?next=1')).status, 200);
});
