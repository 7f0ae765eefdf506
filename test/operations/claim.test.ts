import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, completedOperation, eventCount, eventTypes, ticketClaim } from './claims.js';

const OPERATION_FIELDS = [
  'id', 'account_id', 'idempotency_key', 'fingerprint', 'method', 'route', 'state', 'business_key',
  'exclusive_scope', 'agent_run_id', 'provider_ref', 'created_at', 'updated_at',
].sort();

for (const kind of await storeKinds()) {
  test(`[${kind}] a new key is created with a lease, execute true, and one attempted event holding the command`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const res = await claim(app, gw, 'k-new', ticketClaim('new key', { lease_seconds: 30 }));
    t.is(res.status, 201);
    t.is(res.body.outcome, 'created');
    t.true(res.body.execute);
    t.deepEqual(Object.keys(res.body.operation).sort(), OPERATION_FIELDS);
    t.regex(res.body.operation.id, /^op_/);
    t.is(res.body.operation.state, 'running');
    t.is(res.body.operation.account_id, 'acme');
    t.is(res.body.operation.agent_run_id, 'run-1');
    t.regex(res.body.lease.token, /^[A-Za-z0-9_-]{43}$/);
    const expires = Date.parse(res.body.lease.expires_at);
    t.true(expires > Date.now() + 25_000 && expires <= Date.now() + 31_000);
    t.deepEqual(await eventTypes(app, 'acme', res.body.operation.id), ['attempted']);
    const row = await app.context.store.db.selectFrom('operations').selectAll().where('id', '=', res.body.operation.id).executeTakeFirstOrThrow();
    t.not(row.lease_token_hash, res.body.lease.token, 'only the hash of the lease token is stored');
    const attempted = await app.context.store.db.selectFrom('events').select(['seq', 'payload'])
      .where('account_id', '=', 'acme').where('operation_id', '=', row.id).where('type', '=', 'attempted').executeTakeFirstOrThrow();
    t.false(attempted.payload!.includes(Buffer.from('new key')), 'the command is sealed at rest');
    t.deepEqual(await app.context.ledger.readPayload(app.context.store.db, 'acme', attempted.seq), { title: 'new key', priority: 'high' });
  });

  test(`[${kind}] a retry of a finished operation is replayed with the stored response, the header, and a replayed event`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const response = { status: 201, headers: { location: '/tickets/7' }, body: { id: 7, title: 'printer on fire' } };
    const { operation } = await completedOperation(app, gw, 'k-replay', response);
    t.is(operation.state, 'succeeded');
    t.deepEqual(operation.response, response);
    // The agent lost the answer and retries with the same key and payload.
    const retry = await claim(app, gw, 'k-replay', ticketClaim());
    t.is(retry.status, 200);
    t.is(retry.body.outcome, 'replayed');
    t.false(retry.body.execute);
    t.is(retry.headers.get('idempotent-replayed'), 'true');
    t.deepEqual(retry.body.response, response);
    t.deepEqual(retry.body.operation.response, response);
    t.is(retry.body.lease, undefined);
    t.deepEqual(await eventTypes(app, 'acme', operation.id), ['attempted', 'sent', 'completed', 'replayed']);
  });

  test(`[${kind}] a retry while the lease is held answers 409 in_progress with Retry-After and records retried`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'k-busy', ticketClaim('busy', { lease_seconds: 120 }));
    const retry = await claim(app, gw, 'k-busy', ticketClaim('busy', { lease_seconds: 120 }));
    t.is(retry.status, 409);
    t.is(retry.body.outcome, 'in_progress');
    t.false(retry.body.execute);
    t.is(retry.body.operation.id, first.body.operation.id);
    // A short hint, not the 120-s lease: a client that obeys it asks again in a second.
    t.is(retry.headers.get('retry-after'), '1');
    t.deepEqual(await eventTypes(app, 'acme', first.body.operation.id), ['attempted', 'retried']);
  });

  test(`[${kind}] a reused key with another payload answers 422 and leaks nothing stored`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const secretCommand = ticketClaim('SECRET-TITLE-0xC0FFEE');
    const { operation } = await completedOperation(app, gw, 'k-mismatch', { status: 200, body: { token: 'RESPONSE-SECRET-42' } }, secretCommand);
    const other = await claim(app, gw, 'k-mismatch', ticketClaim('a different title'));
    t.is(other.status, 422);
    t.is(other.body.error.code, 'fingerprint_mismatch');
    t.deepEqual(Object.keys(other.body.error).sort(), ['code', 'message', 'operation_id', 'state']);
    t.is(other.body.error.operation_id, operation.id);
    t.is(other.body.error.state, 'succeeded');
    for (const secret of ['SECRET-TITLE', 'C0FFEE', 'RESPONSE-SECRET', 'priority', operation.fingerprint]) t.false(other.text.includes(secret), secret);
    t.deepEqual(await eventTypes(app, 'acme', operation.id), ['attempted', 'sent', 'completed', 'conflicted']);
  });

  test(`[${kind}] claims refused with 400, 401, 403 or 413 record nothing and leave the key unused`, async (t) => {
    const app = await startTestApp(t, kind, { maxBodyBytes: 4096 });
    const gw = await app.keyFor('acme', 'gateway');
    const auditor = await app.keyFor('acme', 'auditor');
    const cases: Array<[number, string, Promise<Awaited<ReturnType<typeof claim>>>]> = [
      [400, 'idempotency_key_missing', claim(app, gw, null, ticketClaim())],
      [400, 'idempotency_key_invalid', claim(app, gw, '', ticketClaim())],
      [400, 'idempotency_key_invalid', claim(app, gw, 'has space', ticketClaim())],
      [400, 'idempotency_key_invalid', claim(app, gw, 'x'.repeat(256), ticketClaim())],
      [400, 'invalid_request', claim(app, gw, 'k-unused', { method: 'POST', route: '/tickets' })],
      [400, 'invalid_request', claim(app, gw, 'k-unused', ticketClaim('t', { lease_seconds: 3601 }))],
      [400, 'invalid_request', claim(app, gw, 'k-unused', ticketClaim('t', { summary: { reversible: 'yes' } }))],
      [400, 'invalid_route', claim(app, gw, 'k-unused', ticketClaim('t', { route: '/a/../b' }))],
      [400, 'invalid_json', app.request('POST', '/v1/operations', { key: gw, rawBody: '{"method":', headers: { 'idempotency-key': 'k-unused' } })],
      [401, 'unauthenticated', claim(app, 'gh_' + 'A'.repeat(43), 'k-unused', ticketClaim())],
      [403, 'forbidden', claim(app, auditor, 'k-unused', ticketClaim())],
      [413, 'payload_too_large', claim(app, gw, 'k-unused', ticketClaim('x'.repeat(5000)))],
    ];
    for (const [status, code, pending] of cases) {
      const res = await pending;
      t.is(res.status, status, `${code}: ${res.text}`);
      t.is(res.body.error.code, code);
    }
    t.is(await eventCount(app, 'acme'), 0);
    const now = await claim(app, gw, 'k-unused', ticketClaim());
    t.is(now.status, 201, 'the key refused with 400 is still free');
  });
}
