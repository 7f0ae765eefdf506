import test from 'ava';
import { startTestApp } from '../helpers/app.js';

const listOps = (url: string, authorization?: string) => fetch(`${url}/v1/operations`, { headers: authorization === undefined ? {} : { authorization } });

test('[sqlite] Authorization: Bearer with one or more spaces before the key, and the scheme in any case, authenticates (RFC 6750: Bearer 1*SP token)', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  for (const header of [`Bearer ${gw}`, `Bearer  ${gw}`, `Bearer   ${gw}`, `bearer ${gw}`, `BEARER  ${gw}`]) {
    t.is((await listOps(app.url, header)).status, 200, JSON.stringify(header.replace(gw, '<key>')));
  }
});

test('[sqlite] a 401 carries WWW-Authenticate: Bearer, with error="invalid_token" when the key sent is unknown', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const cases: Array<[string | undefined, string, string]> = [
    [undefined, 'Bearer', 'send Authorization'],
    ['Basic dXNlcjpwYXNz', 'Bearer', 'send Authorization'],
    ['Bearer', 'Bearer', 'send Authorization'],
    [`Bearer gh_${'A'.repeat(43)}`, 'Bearer error="invalid_token"', 'unknown or revoked'],
  ];
  for (const [header, challenge, message] of cases) {
    const response = await listOps(app.url, header);
    t.is(response.status, 401);
    t.is(response.headers.get('www-authenticate'), challenge, String(header));
    const body = (await response.json()) as { error: { code: string; message: string } };
    t.is(body.error.code, 'unauthenticated');
    t.regex(body.error.message, new RegExp(message));
  }
  const metrics = await fetch(`${app.url}/metrics`);
  t.is(metrics.status, 401);
  t.is(metrics.headers.get('www-authenticate'), 'Bearer', '/metrics takes the same key');
});
