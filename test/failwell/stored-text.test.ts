// §2: whatever the input, a client's mistake is answered below 500, on both stores alike (§9).
// PostgreSQL's text cannot hold U+0000 and its b-tree refuses an entry over 2,704 bytes: a NUL in
// a key, a name, a filter or an id, or a route of a few thousand characters, reached the database
// there and came back as 500 internal, while SQLite took them (core/stored-text.ts, core/route.ts).
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, report, ticketClaim } from '../operations/claims.js';

const kinds = await storeKinds();
const NUL = '\u0000';

async function refusedNaming(t: import('ava').ExecutionContext, app: TestApp, res: { status: number; body: any; text: string }, member: string) {
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'invalid_request');
  t.true(res.body.error.message.includes(`"${member}"`), res.body.error.message);
  t.true(res.body.error.message.includes('U+0000'), res.body.error.message);
  t.is((await app.request('GET', '/v1/healthz')).status, 200, 'the service stays up');
}

for (const kind of kinds) {
  test(`[${kind}] a NUL in any text the service keeps is a 400 naming where it is, never a 500; commands keep theirs`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const admin = app.adminKey;
    for (const member of ['agent_run_id', 'business_key', 'exclusive_scope']) {
      await refusedNaming(t, app, await claim(app, gw, `nul-${member}`, ticketClaim('x', { [member]: `a${NUL}b` })), member);
    }
    await refusedNaming(t, app, await claim(app, gw, 'nul-summary', ticketClaim('x', { summary: { target: `t${NUL}` } })), 'summary.target');
    await refusedNaming(t, app, await app.request('POST', '/v1/principals', { key: admin, body: { account_id: 'acme', roles: ['auditor'], name: `n${NUL}` } }), 'name');

    // A NUL inside the command is data: sealed as bytes, kept, replayed.
    const created = await claim(app, gw, 'nul-in-command', ticketClaim(`title${NUL}with a NUL`));
    t.is(created.status, 201, created.text);
    const id = created.body.operation.id;
    await refusedNaming(t, app, await report(app, gw, id, { type: 'accepted', lease_token: created.body.lease.token, provider_ref: `p${NUL}` }), 'provider_ref');
    t.is((await report(app, gw, id, { type: 'sent', lease_token: created.body.lease.token })).status, 200);
    const retry = await claim(app, gw, 'nul-in-command', ticketClaim(`title${NUL}with a NUL`));
    t.is(retry.body.outcome, 'in_progress', `the retry matches its fingerprint (a changed one is 422): ${retry.text}`);

    for (const filter of ['agent_run_id', 'business_key', 'idempotency_key']) {
      await refusedNaming(t, app, await app.request('GET', `/v1/operations?${filter}=a%00b`, { key: gw }), filter);
    }
    await refusedNaming(t, app, await app.request('GET', '/v1/approvals?account_id=acme%00', { key: admin }), 'account_id');
    for (const path of ['/v1/operations/op_%00', '/v1/operations/op_%00/timeline', '/v1/approvals/apr_%00']) {
      const res = await app.request('GET', path, { key: admin });
      t.is(res.status, 404, `${path}: ${res.text}`);
      t.is(res.body.error.code, 'not_found');
    }
    const decided = await app.request('POST', '/v1/approvals/apr_%00/decisions', { key: admin, body: { decision: 'approve', fingerprint: 'x' } });
    t.is(decided.status, 404, decided.text);
  });

  test(`[${kind}] a method or route past the bounds is refused as the client's mistake, the same on both stores`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    // Random-looking, so PostgreSQL cannot compress the index entry below its limit.
    const segment = (n: number) => Array.from({ length: n }, (_, i) => 'abcdefghijklmnopqrstuvwxyz0123456789'[(i * 7919 + (i >> 3) * 104729) % 36]).join('');
    const longest = `/${segment(2047)}`;
    const accepted = await claim(app, gw, 'route-2048', { method: 'POST', route: longest, command: 1 });
    t.is(accepted.status, 201, `a route of 2,048 characters is a route: ${accepted.text.slice(0, 200)}`);
    const tooLong = await claim(app, gw, 'route-2049', { method: 'POST', route: `${longest}x`, command: 1 });
    t.is(tooLong.status, 400, tooLong.text.slice(0, 200));
    t.is(tooLong.body.error.code, 'invalid_route');
    t.regex(tooLong.body.error.message, /at most 2048 characters/);
    const method = await claim(app, gw, 'method-65', { method: 'X'.repeat(65), route: '/x', command: 1 });
    t.is(method.status, 400, method.text);
    t.is(method.body.error.code, 'invalid_request');
    t.is((await claim(app, gw, 'method-64', { method: 'X'.repeat(64), route: '/x', command: 1 })).status, 201);
  });

  test(`[${kind}] a business_key or exclusive_scope built by a policy template is held to a claim's own bounds (1–255 characters, no NUL)`, async (t) => {
    const app = await startTestApp(t, kind, {
      policies: { policies: [{ method: 'POST', route: '/incidents', business_key: 'alert:{/event_id}', exclusive_scope: 'env:{/env}' }] },
    });
    const gw = await app.keyFor('acme', 'gateway');
    const incident = (event_id: string, env: string) => ({ method: 'POST', route: '/incidents', command: { event_id, env } });
    const fits = await claim(app, gw, 'bk-255', incident('e'.repeat(255 - 'alert:'.length), 'fits'));
    t.is(fits.status, 201, fits.text);
    t.is(fits.body.operation.business_key.length, 255);
    for (const [key, body, what] of [
      ['bk-256', incident('e'.repeat(256 - 'alert:'.length), 'a'), /business_key .* is 256 characters, over 255/],
      ['bk-3000', incident(Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + ((i * 31) % 26))).join(''), 'b'), /business_key/],
      ['bk-nul', incident(`e${NUL}`, 'c'), /business_key .* contains U\+0000/],
      ['scope-long', incident('ok', 's'.repeat(300)), /exclusive_scope .* over 255/],
    ] as const) {
      // Each in an environment of its own: refused for its key, not for a scope another holds.
      const res = await claim(app, gw, key, body);
      t.is(res.status, 400, `${key}: ${res.text.slice(0, 300)}`);
      t.is(res.body.error.code, 'command_invalid');
      t.regex(res.body.error.message, what);
    }
    t.is((await app.request('GET', '/v1/healthz')).status, 200);
  });
}
