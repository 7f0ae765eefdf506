import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, eventCount, report, ticketClaim } from './claims.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] every operation route called with another account's ids answers 404 and changes nothing`, async (t) => {
    const app = await startTestApp(t, kind);
    const acme = await app.keyFor('acme', 'gateway');
    const globex = await app.keyFor('globex', 'gateway');
    const { body } = await claim(app, acme, 'acme-key', ticketClaim('acme only'));
    const id = body.operation.id;
    const token = body.lease.token;
    const before = await eventCount(app, 'acme');
    const calls = [
      app.request('GET', `/v1/operations/${id}`, { key: globex }),
      app.request('GET', `/v1/operations/${id}/timeline`, { key: globex }),
      // Even with the right lease token: the operation does not exist for this caller.
      report(app, globex, id, { type: 'sent', lease_token: token }),
      report(app, globex, id, { type: 'heartbeat', lease_token: token }),
      app.request('GET', '/v1/operations?account_id=acme', { key: globex }),
      app.request('GET', '/v1/operations?account_id=acme&state=running', { key: globex }),
      app.request('GET', '/v1/operations/op_doesnotexist', { key: acme }),
    ];
    for (const res of await Promise.all(calls)) {
      t.is(res.status, 404, res.text);
      t.is(res.body.error.code, 'not_found');
      t.false(res.text.includes('acme only'));
    }
    const byKey = await app.request('GET', '/v1/operations?idempotency_key=acme-key', { key: globex });
    t.deepEqual(byKey.body, { items: [], next_cursor: null });
    t.is(await eventCount(app, 'acme'), before);
    // The same key in another account is another operation, never a conflict.
    const own = await claim(app, globex, 'acme-key', ticketClaim('globex own'));
    t.is(own.status, 201);
    t.not(own.body.operation.id, id);
    // Resolve is admin-only: a gateway is refused by its role before any lookup.
    const resolve = await app.request('POST', `/v1/operations/${id}/resolve`, { key: globex, body: { state: 'failed', note: 'x' } });
    t.is(resolve.status, 403);
  });

  test(`[${kind}] auditors and admins read any account's operations; an approver reads none`, async (t) => {
    const app = await startTestApp(t, kind);
    const acme = await app.keyFor('acme', 'gateway');
    const auditor = await app.keyFor('audit-co', 'auditor');
    const approver = await app.keyFor('acme', 'approver');
    const { body } = await claim(app, acme, 'k-read', ticketClaim());
    for (const key of [auditor, app.adminKey]) {
      t.is((await app.request('GET', `/v1/operations/${body.operation.id}`, { key })).status, 200);
      t.is((await app.request('GET', `/v1/operations/${body.operation.id}/timeline`, { key })).status, 200);
      const listed = await app.request('GET', '/v1/operations?account_id=acme', { key });
      t.deepEqual(listed.body.items.map((o: { id: string }) => o.id), [body.operation.id]);
      // They reach into any account, so they must say which (docs/http-api.md).
      const unnamed = await app.request('GET', '/v1/operations', { key });
      t.is(unnamed.status, 400);
      t.is(unnamed.body.error.code, 'invalid_request');
      t.regex(unnamed.body.error.message, /account_id/);
    }
    t.is((await app.request('GET', `/v1/operations/${body.operation.id}`, { key: approver })).status, 403);
    t.is((await app.request('GET', '/v1/operations', { key: approver })).status, 403);
    const auditorReport = await report(app, auditor, body.operation.id, { type: 'sent', lease_token: body.lease.token });
    t.is(auditorReport.status, 403);
  });
}
