import test from 'ava';
import { createPublicKey, verify } from 'node:crypto';
import { storeKinds } from '../helpers/stores.js';
import { newKey, payment, paymentsPolicy, startApprovalApp, type ApprovalApp } from './approval-app.js';

/** Ed25519 by node:crypto with the raw key from GET /v1/keys wrapped as SPKI DER: nothing shared with the server's code. */
async function grantVerifies(app: ApprovalApp, grant: Record<string, unknown>): Promise<boolean> {
  const { keys } = (await app.request('GET', '/v1/keys')).body as { keys: Array<{ key_id: string; public_key: string }> };
  const key = keys.find((k) => k.key_id === grant.key_id);
  if (!key) return false;
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(key.public_key, 'base64')]);
  const { signature, ...rest } = grant;
  const jcs = '{' + Object.keys(rest).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(rest[k])}`).join(',') + '}';
  return verify(null, Buffer.from(jcs), createPublicKey({ key: spki, format: 'der', type: 'spki' }), Buffer.from(String(signature), 'base64url'));
}

for (const kind of await storeKinds()) {
  test(`[${kind}] a new key under an approval policy answers 202 approval_required with a pending approval, and retries see the same one`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ approvers: 1, request_ttl_seconds: 600 }));
    const key = newKey();
    const first = await app.claim(key, payment());
    t.is(first.status, 202, first.text);
    t.like(first.body, { outcome: 'approval_required', execute: false, operation: { state: 'awaiting_approval' } });
    const approval = first.body.approval;
    t.regex(approval.id, /^apr_/);
    t.like(approval, { state: 'pending', operation_id: first.body.operation.id, idempotency_key: key, fingerprint: first.body.operation.fingerprint, approvers_required: 1 });
    t.deepEqual(approval.command, payment().command);
    t.is(approval.summary.target, 'Supplier GmbH');
    t.true(Date.parse(approval.expires_at) - Date.parse(approval.requested_at) === 600_000);
    const again = await app.claim(key, payment());
    t.is(again.status, 202);
    t.like(again.body, { outcome: 'approval_required', execute: false, approval: { id: approval.id, state: 'pending' } });
    t.deepEqual(await app.eventTypes(), ['attempted', 'approval_requested', 'retried']);
  });

  test(`[${kind}] once approved, the retry gets 200 approved, execute true, a lease and a grant an independent Ed25519 check accepts; the next retry does not execute again`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ ttl_seconds: 300 }));
    const key = newKey();
    const { body } = await app.claim(key, payment());
    const decided = await app.decide(body.approval.id, 'approve', body.operation.fingerprint);
    t.is(decided.status, 200, decided.text);
    t.is(decided.body.approval.state, 'approved');
    const retry = await app.claim(key, payment());
    t.is(retry.status, 200, retry.text);
    t.like(retry.body, { outcome: 'approved', execute: true, operation: { state: 'running' } });
    t.truthy(retry.body.lease.token);
    const grant = retry.body.grant;
    t.like(grant, { approval_id: body.approval.id, operation_id: body.operation.id, account_id: 'acme', idempotency_key: key, fingerprint: body.operation.fingerprint });
    t.is(grant.approved_by.length, 1);
    t.is(Date.parse(grant.expires_at) - Date.parse(grant.approved_at), 300_000);
    t.true(await grantVerifies(app, grant));
    t.false(await grantVerifies(app, { ...grant, fingerprint: '0'.repeat(64) }));
    const third = await app.claim(key, payment());
    t.is(third.status, 409);
    t.like(third.body, { outcome: 'in_progress', execute: false });
    t.deepEqual(await app.eventTypes(), ['attempted', 'approval_requested', 'approval_decided', 'approved', 'leased', 'retried']);
  });

  test(`[${kind}] a denied approval answers the retry 403 denied, execute false, and the operation is terminal`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const key = newKey();
    const { body } = await app.claim(key, payment());
    const denied = await app.decide(body.approval.id, 'deny', body.operation.fingerprint, app.approver, 'wrong supplier');
    t.is(denied.status, 200, denied.text);
    t.is(denied.body.approval.state, 'denied');
    t.like(denied.body.approval.decisions[0], { decision: 'deny', reason: 'wrong supplier' });
    const retry = await app.claim(key, payment());
    t.is(retry.status, 403, retry.text);
    t.like(retry.body, { outcome: 'denied', execute: false, operation: { state: 'denied' } });
    // The approval that denied it, with the decision, as docs/retry-contract.md's table says.
    t.like(retry.body.approval, { id: body.approval.id, state: 'denied' });
    t.like(retry.body.approval.decisions[0], { decision: 'deny' });
    t.deepEqual((await app.eventTypes()).slice(0, 5), ['attempted', 'approval_requested', 'approval_decided', 'denied', 'retried']);
  });

  test(`[${kind}] when the request expires before anyone decides, the retry records approval_expired and gets a new pending approval`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ request_ttl_seconds: 2 }));
    const key = newKey();
    const { body } = await app.claim(key, payment());
    app.clock.advance(3);
    const retry = await app.claim(key, payment());
    t.is(retry.status, 202, retry.text);
    t.like(retry.body, { outcome: 'approval_required', execute: false, approval: { state: 'pending' } });
    t.not(retry.body.approval.id, body.approval.id);
    t.is((await app.request('GET', `/v1/approvals/${body.approval.id}`, { key: app.approver })).body.approval.state, 'expired');
    t.deepEqual(await app.eventTypes(), ['attempted', 'approval_requested', 'approval_expired', 'approval_requested']);
  });

  test(`[${kind}] when the grant expires before the lease is taken, the retry gets a new pending approval, never a silent pass`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ ttl_seconds: 1 }));
    const key = newKey();
    const { body } = await app.claim(key, payment());
    await app.decide(body.approval.id, 'approve', body.operation.fingerprint);
    app.clock.advance(2);
    const retry = await app.claim(key, payment());
    t.is(retry.status, 202, retry.text);
    t.like(retry.body, { outcome: 'approval_required', execute: false, operation: { state: 'awaiting_approval' } });
    t.not(retry.body.approval.id, body.approval.id);
    t.deepEqual((await app.eventTypes()).slice(-2), ['approval_expired', 'approval_requested']);
  });

  test(`[${kind}] when the grant expires between the lease and sent, sent answers 409 approval_expired and the retry makes a new request`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ ttl_seconds: 2 }));
    const key = newKey();
    const { body } = await app.claim(key, payment());
    await app.decide(body.approval.id, 'approve', body.operation.fingerprint);
    const leased = await app.claim(key, payment());
    t.is(leased.body.outcome, 'approved');
    app.clock.advance(3);
    const sent = await app.request('POST', `/v1/operations/${body.operation.id}/events`, { key: app.gateway, body: { type: 'sent', lease_token: leased.body.lease.token } });
    t.is(sent.status, 409, sent.text);
    t.is(sent.body.error.code, 'approval_expired');
    // A decision on it now is refused as expired, saying when it ran out: its grant's end, not the request's.
    const lateDecision = await app.decide(body.approval.id, 'approve', body.operation.fingerprint);
    t.is(lateDecision.body.error.code, 'approval_expired');
    const grantEnd = new Date(Date.parse(leased.body.grant.expires_at)).toISOString();
    t.true(lateDecision.body.error.message.includes(`its grant expired at ${grantEnd}`), lateDecision.body.error.message);
    const retry = await app.claim(key, payment());
    t.is(retry.status, 202, retry.text);
    t.like(retry.body, { outcome: 'approval_required', execute: false, approval: { state: 'pending' } });
    t.not(retry.body.approval.id, body.approval.id);
    // The zombie lease holder cannot send any more.
    const late = await app.request('POST', `/v1/operations/${body.operation.id}/events`, { key: app.gateway, body: { type: 'sent', lease_token: leased.body.lease.token } });
    t.is(late.status, 409);
    t.is(late.body.error.code, 'lease_lost');
    t.false((await app.eventTypes()).includes('sent'));
  });

  test(`[${kind}] a payload changed after approval: the same key answers 422 fingerprint_mismatch, a new key needs a new approval`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const key = newKey();
    const { body } = await app.claim(key, payment(4200));
    await app.decide(body.approval.id, 'approve', body.operation.fingerprint);
    const changed = await app.claim(key, payment(999_900));
    t.is(changed.status, 422, changed.text);
    t.is(changed.body.error.code, 'fingerprint_mismatch');
    const other = await app.claim(newKey(), payment(999_900));
    t.is(other.status, 202, other.text);
    t.like(other.body, { outcome: 'approval_required', execute: false, approval: { state: 'pending' } });
    t.not(other.body.approval.id, body.approval.id);
    // The original approval still covers only its own command.
    const original = await app.claim(key, payment(4200));
    t.is(original.body.grant.fingerprint, body.operation.fingerprint);
  });

  test(`[${kind}] with approvers 2, one approval leaves it pending and a second distinct approver approves, both named in the grant`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ approvers: 2 }));
    const key = newKey();
    const { body } = await app.claim(key, payment());
    const one = await app.decide(body.approval.id, 'approve', body.operation.fingerprint, app.approver);
    t.is(one.body.approval.state, 'pending');
    t.is((await app.claim(key, payment())).status, 202);
    const two = await app.decide(body.approval.id, 'approve', body.operation.fingerprint, app.approver2);
    t.is(two.body.approval.state, 'approved');
    const retry = await app.claim(key, payment());
    t.is(retry.status, 200);
    t.is(retry.body.grant.approved_by.length, 2);
    t.true(await grantVerifies(app, retry.body.grant));
  });
}
