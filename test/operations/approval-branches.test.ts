import test from 'ava';
import { storeKinds } from '../helpers/stores.js';
import { Operations } from '../../src/operations/operations.js';
import { ERROR_STATUS } from '../../src/http/error-status.js';
import { DomainError } from '../../src/core/errors.js';
import { claim, eventCount, report, startAppWithPolicies } from './claims.js';

const approvalPolicy = [{ method: 'POST', route: '/payments', approval: { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 3600 } }];
const payment = { method: 'POST', route: '/payments', command: { amount: 100, currency: 'EUR' }, summary: { target: 'Supplier', reversible: false } };

for (const kind of await storeKinds()) {
  test(`[${kind}] a claim under an approval policy waits for approval, then takes the lease with the grant and records leased`, async (t) => {
    const app = await startAppWithPolicies(t, kind, approvalPolicy);
    const gw = await app.keyFor('acme', 'gateway');
    const approver = await app.keyFor('acme', 'approver');
    const first = await claim(app, gw, 'pay-1', payment);
    t.is(first.status, 202, first.text);
    t.like(first.body, { outcome: 'approval_required', execute: false, operation: { state: 'awaiting_approval' } });
    t.is(first.body.lease, undefined);
    const pending = await claim(app, gw, 'pay-1', payment);
    t.is(pending.status, 202);
    const decided = await app.request('POST', `/v1/approvals/${first.body.approval.id}/decisions`, {
      key: approver, body: { decision: 'approve', fingerprint: first.body.operation.fingerprint, reason: 'invoice checked' },
    });
    t.true(decided.status < 300, decided.text);
    const approved = await claim(app, gw, 'pay-1', payment);
    t.is(approved.status, 200, approved.text);
    t.like(approved.body, { outcome: 'approved', execute: true, operation: { state: 'running' } });
    t.truthy(approved.body.lease.token);
    t.is(approved.body.grant.operation_id, first.body.operation.id);
    const again = await claim(app, gw, 'pay-1', payment);
    t.is(again.body.outcome, 'in_progress', 'the lease is taken once');
    const sent = await report(app, gw, first.body.operation.id, { type: 'sent', lease_token: approved.body.lease.token });
    t.is(sent.status, 200, sent.text);
    const types = (await app.context.store.db.selectFrom('events').select('type').where('account_id', '=', 'acme')
      .where('operation_id', '=', first.body.operation.id).orderBy('seq').execute()).map((e) => e.type);
    t.deepEqual(types.filter((type) => ['attempted', 'approval_requested', 'retried', 'leased', 'sent'].includes(type)),
      ['attempted', 'approval_requested', 'retried', 'leased', 'retried', 'sent']);
  });

  test(`[${kind}] with no approvals gate wired, a claim that needs approval is refused unavailable and records nothing`, async (t) => {
    const app = await startAppWithPolicies(t, kind, approvalPolicy);
    const { context } = app;
    const operations = new Operations({ store: context.store, ledger: context.ledger, clock: context.clock, policies: context.policies });
    const principal = { id: 'prn_test', account_id: 'acme', roles: ['gateway' as const], name: null };
    const error = await t.throwsAsync(operations.claim(principal, 'pay-2', payment));
    t.true(error instanceof DomainError);
    t.is((error as DomainError).code, 'unavailable');
    t.is(ERROR_STATUS[(error as DomainError).code], 503);
    t.is(await eventCount(app, 'acme'), 0);
    t.is((await context.store.db.selectFrom('operations').select('id').execute()).length, 0);
  });
}
