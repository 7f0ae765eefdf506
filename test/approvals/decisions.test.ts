import test from 'ava';
import { storeKinds } from '../helpers/stores.js';
import { ACCOUNT, newKey, payment, paymentsPolicy, startApprovalApp, type ApprovalApp } from './approval-app.js';

async function pending(app: ApprovalApp, body = payment()) {
  const claim = await app.claim(newKey(), body);
  return { approvalId: claim.body.approval.id as string, fingerprint: claim.body.operation.fingerprint as string, operationId: claim.body.operation.id as string };
}

for (const kind of await storeKinds()) {
  test(`[${kind}] a decision naming another fingerprint answers 409 fingerprint_mismatch and records nothing`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const { approvalId } = await pending(app);
    const before = await app.eventTypes();
    const res = await app.decide(approvalId, 'approve', 'f'.repeat(64));
    t.is(res.status, 409, res.text);
    t.is(res.body.error.code, 'fingerprint_mismatch');
    t.false(res.text.includes('Supplier'), 'an error never echoes approval content');
    t.deepEqual(await app.eventTypes(), before);
  });

  test(`[${kind}] the principal that made the claim cannot approve it: 403 self_approval`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const both = await app.keyFor(ACCOUNT, 'gateway', 'approver');
    const claim = await app.claim(newKey(), payment(), both);
    const res = await app.decide(claim.body.approval.id, 'approve', claim.body.operation.fingerprint, both);
    t.is(res.status, 403, res.text);
    t.is(res.body.error.code, 'self_approval');
  });

  test(`[${kind}] a principal that retried someone else's claim is a requester too: 403 self_approval, and no lease for it`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const both = await app.keyFor(ACCOUNT, 'gateway', 'approver');
    const key = newKey();
    const first = await app.claim(key, payment());
    t.is(first.status, 202, first.text);
    const retry = await app.claim(key, payment(), both);
    t.is(retry.status, 202, retry.text);
    const res = await app.decide(first.body.approval.id, 'approve', first.body.operation.fingerprint, both);
    t.is(res.status, 403, res.text);
    t.is(res.body.error.code, 'self_approval');
    const again = await app.claim(key, payment(), both);
    t.is(again.body.outcome, 'approval_required', 'still pending: the refused decision approved nothing');
    t.false(again.body.execute);
    // A principal that never claimed it decides as usual.
    t.is((await app.decide(first.body.approval.id, 'approve', first.body.operation.fingerprint)).status, 200);
  });

  test(`[${kind}] a retry that renewed an expired approval does not let the retrying principal approve the new one`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ request_ttl_seconds: 1 }));
    const both = await app.keyFor(ACCOUNT, 'gateway', 'approver');
    const key = newKey();
    const first = await app.claim(key, payment());
    app.clock.advance(2);
    const renewed = await app.claim(key, payment(), both);
    t.is(renewed.body.outcome, 'approval_required', renewed.text);
    t.not(renewed.body.approval.id, first.body.approval.id, 'a new request');
    const res = await app.decide(renewed.body.approval.id, 'approve', renewed.body.operation.fingerprint, both);
    t.is(res.status, 403, res.text);
    t.is(res.body.error.code, 'self_approval');
  });

  test(`[${kind}] a scope_busy refusal recorded on the holding operation does not make its caller a requester of it`, async (t) => {
    const scoped = { policies: [{ method: 'POST', route: '/payments', approval: { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 3600 } }] };
    const app = await startApprovalApp(t, kind, scoped);
    const both = await app.keyFor(ACCOUNT, 'gateway', 'approver');
    const holder = await app.claim(newKey(), payment(4200, { exclusive_scope: 'payments:acme' }));
    t.is(holder.status, 202, holder.text);
    const busy = await app.claim(newKey(), payment(9900, { exclusive_scope: 'payments:acme' }), both);
    t.is(busy.body.error?.code ?? busy.body.outcome, 'scope_busy', busy.text);
    const res = await app.decide(holder.body.approval.id, 'approve', holder.body.operation.fingerprint, both);
    t.is(res.status, 200, res.text);
  });

  test(`[${kind}] the same approver deciding twice answers 409 already_decided, so one person cannot fill an N-of-M quorum`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ approvers: 2 }));
    const { approvalId, fingerprint } = await pending(app);
    t.is((await app.decide(approvalId, 'approve', fingerprint)).status, 200);
    const again = await app.decide(approvalId, 'approve', fingerprint);
    t.is(again.status, 409, again.text);
    t.is(again.body.error.code, 'already_decided');
    const view = await app.request('GET', `/v1/approvals/${approvalId}`, { key: app.approver });
    t.is(view.body.approval.state, 'pending');
    t.is(view.body.approval.decisions.length, 1);
  });

  test(`[${kind}] a decision after expires_at answers 409 approval_expired and records approval_expired once`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ request_ttl_seconds: 1 }));
    const { approvalId, fingerprint } = await pending(app);
    app.clock.advance(2);
    const res = await app.decide(approvalId, 'approve', fingerprint);
    t.is(res.status, 409, res.text);
    t.is(res.body.error.code, 'approval_expired');
    t.is((await app.decide(approvalId, 'approve', fingerprint, app.approver2)).body.error.code, 'approval_expired');
    t.deepEqual(await app.eventTypes(), ['attempted', 'approval_requested', 'approval_expired']);
    const expiry = await app.context.store.db.selectFrom('events').select('actor').where('account_id', '=', 'acme').where('type', '=', 'approval_expired').executeTakeFirstOrThrow();
    t.is(expiry.actor, null, 'the service expired it, as every expiry (docs/formats.md): the late approver only noticed');
    const list = await app.request('GET', '/v1/approvals?state=pending', { key: app.approver });
    t.deepEqual(list.body.items, []);
  });

  test(`[${kind}] deciding an approval that is no longer pending answers 409 invalid_transition`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const { approvalId, fingerprint } = await pending(app);
    t.is((await app.decide(approvalId, 'deny', fingerprint)).status, 200);
    const late = await app.decide(approvalId, 'approve', fingerprint, app.approver2);
    t.is(late.status, 409, late.text);
    t.is(late.body.error.code, 'invalid_transition');
  });

  test(`[${kind}] one deny denies even when two approvals are required, and frees the exclusive scope`, async (t) => {
    const app = await startApprovalApp(t, kind, {
      policies: [{ method: 'POST', route: '/deploys', exclusive_scope: 'deploy:{/environment}', approval: { approvers: 2, ttl_seconds: 60, request_ttl_seconds: 600 } }],
    });
    const deploy = { method: 'POST', route: '/deploys', command: { environment: 'prod', version: '1.2.3' } };
    const claim = await app.claim(newKey(), deploy);
    t.is(claim.status, 202, claim.text);
    const busy = await app.claim(newKey(), { ...deploy, command: { environment: 'prod', version: '1.2.4' } });
    t.is(busy.body.error?.code, 'scope_busy');
    await app.decide(claim.body.approval.id, 'approve', claim.body.operation.fingerprint, app.approver);
    const denied = await app.decide(claim.body.approval.id, 'deny', claim.body.operation.fingerprint, app.approver2, 'not during the freeze');
    t.is(denied.body.approval.state, 'denied');
    const op = await app.request('GET', `/v1/operations/${claim.body.operation.id}`, { key: app.gateway });
    t.is(op.body.operation.state, 'denied');
    const next = await app.claim(newKey(), { ...deploy, command: { environment: 'prod', version: '1.2.4' } });
    t.is(next.status, 202, next.text);
  });

  test(`[${kind}] another account's approval answers 404 to read and decide; a gateway key answers 403; an admin may decide`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const { approvalId, fingerprint } = await pending(app);
    const stranger = await app.keyFor('other', 'approver');
    t.is((await app.request('GET', `/v1/approvals/${approvalId}`, { key: stranger })).status, 404);
    const res = await app.decide(approvalId, 'approve', fingerprint, stranger);
    t.is(res.status, 404);
    t.is(res.body.error.code, 'not_found');
    t.deepEqual((await app.request('GET', '/v1/approvals?state=pending', { key: stranger })).body.items, []);
    t.is((await app.decide(approvalId, 'approve', fingerprint, app.gateway)).body.error.code, 'forbidden');
    t.is((await app.request('GET', '/v1/approvals', { key: app.gateway })).status, 403);
    t.is((await app.decide(approvalId, 'approve', fingerprint, app.adminKey)).body.approval.state, 'approved');
  });

  test(`[${kind}] the approver is the authenticated principal: a body naming someone else is refused, the decision records the caller`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const { approvalId, fingerprint } = await pending(app);
    const forged = await app.request('POST', `/v1/approvals/${approvalId}/decisions`, { key: app.approver, body: { decision: 'approve', fingerprint, reason: 'ok', approver: 'prn_ceo' } });
    t.is(forged.status, 400);
    t.is(forged.body.error.code, 'invalid_request');
    const missing = await app.request('POST', `/v1/approvals/${approvalId}/decisions`, { key: app.approver, body: { decision: 'maybe', fingerprint } });
    t.is(missing.status, 400);
    const ok = await app.decide(approvalId, 'approve', fingerprint);
    const me = (await app.context.principals.authenticate(app.approver))!;
    t.is(ok.body.approval.decisions[0].approver, me.id);
  });

  test(`[${kind}] the pending list pages with a cursor, oldest first, and shows the contract's fields`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await pending(app, payment(100 + i))).approvalId);
      app.clock.advance(0.01);
    }
    const first = await app.request('GET', '/v1/approvals?state=pending&limit=2', { key: app.approver });
    t.is(first.status, 200, first.text);
    t.deepEqual(first.body.items.map((a: { id: string }) => a.id), ids.slice(0, 2));
    t.truthy(first.body.next_cursor);
    const second = await app.request('GET', `/v1/approvals?state=pending&limit=2&cursor=${first.body.next_cursor}`, { key: app.approver });
    t.deepEqual(second.body.items.map((a: { id: string }) => a.id), ids.slice(2));
    t.is(second.body.next_cursor, null);
    for (const field of ['id', 'operation_id', 'account_id', 'idempotency_key', 'fingerprint', 'summary', 'command', 'requested_by', 'requested_at', 'expires_at', 'approvers_required', 'decisions', 'state']) {
      t.true(field in first.body.items[0], field);
    }
    t.is((await app.request('GET', '/v1/approvals?state=weird', { key: app.approver })).status, 400);
    t.is((await app.request('GET', '/v1/approvals?cursor=nonsense', { key: app.approver })).status, 400);
  });
}
