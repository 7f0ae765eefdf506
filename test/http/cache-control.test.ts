import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { claim, ticketClaim } from '../operations/claims.js';

test('[sqlite] answers that carry secrets, and every other answer, are Cache-Control: no-store', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const created = await app.request('POST', '/v1/principals', { key: app.adminKey, body: { account_id: 'acme', roles: ['gateway'] } });
  t.is(created.status, 201);
  t.is(created.headers.get('cache-control'), 'no-store', 'the new API key');
  const claimed = await claim(app, created.body.key, 'k-cache', ticketClaim());
  t.is(claimed.status, 201);
  t.truthy(claimed.body.lease.token);
  t.is(claimed.headers.get('cache-control'), 'no-store', 'the lease token');
  for (const [method, path, key] of [['GET', '/v1/healthz', undefined], ['GET', '/v1/operations', undefined], ['GET', '/v1/no-such-route', app.adminKey], ['GET', '/metrics', app.adminKey]] as const) {
    t.is((await app.request(method, path, { key })).headers.get('cache-control'), 'no-store', `${method} ${path}`);
  }
});

test('[sqlite] a route with a reason to be cached says so: the pages\' stylesheet', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const css = await fetch(`${app.url}/ui/style.css`);
  t.is(css.status, 200);
  t.is(css.headers.get('cache-control'), 'public, max-age=300');
});
