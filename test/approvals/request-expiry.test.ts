import test from 'ava';
import { storeKinds } from '../helpers/stores.js';
import { newKey, payment, paymentsPolicy, startApprovalApp } from './approval-app.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] a pending request is recorded expired when its time runs out, with no claim or decision touching it`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ request_ttl_seconds: 60 }));
    const key = newKey();
    const claim = await app.claim(key, payment());
    t.is(claim.status, 202, claim.text);
    t.is(await app.context.approvals.expireDueRequests(), 0, 'not due yet');
    app.clock.advance(61);
    // The server's own sweeper runs every second: wait for it rather than calling a pass.
    const deadline = Date.now() + 10_000;
    while (!(await app.eventTypes()).includes('approval_expired')) {
      if (Date.now() > deadline) return t.fail('the sweeper never expired the request');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.deepEqual(await app.eventTypes(), ['attempted', 'approval_requested', 'approval_expired']);
    const expiry = await app.context.store.db.selectFrom('events').select(['actor', 'ts', 'state'])
      .where('account_id', '=', 'acme').where('type', '=', 'approval_expired').executeTakeFirstOrThrow();
    t.is(expiry.actor, null, 'the service expired it');
    t.is(expiry.state, 'awaiting_approval');
    t.true(Date.parse(expiry.ts) >= Date.parse(claim.body.approval.expires_at), 'recorded at or after its expiry');
    const view = await app.request('GET', `/v1/approvals/${claim.body.approval.id}`, { key: app.approver });
    t.is(view.body.approval.state, 'expired');
    t.is(await app.context.approvals.expireDueRequests(), 0, 'expired once');
    // A retry asks again: one new request, and the expiry is not recorded a second time.
    const retry = await app.claim(key, payment());
    t.is(retry.body.outcome, 'approval_required', retry.text);
    t.not(retry.body.approval.id, claim.body.approval.id);
    t.deepEqual(await app.eventTypes(), ['attempted', 'approval_requested', 'approval_expired', 'approval_requested']);
  });

  test(`[${kind}] an expiry pass and decisions racing on a due request: it ends expired once, and no decision is recorded`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy({ request_ttl_seconds: 60 }));
    const claims = await Promise.all(Array.from({ length: 5 }, () => app.claim(newKey(), payment())));
    app.clock.advance(61);
    const [passes, ...decisions] = await Promise.all([
      Promise.all([app.context.approvals.expireDueRequests(), app.context.approvals.expireDueRequests()]),
      ...claims.map((c) => app.decide(c.body.approval.id, 'approve', c.body.operation.fingerprint)),
    ]);
    for (const d of decisions) t.is(d.body.error?.code, 'approval_expired', d.text);
    const types = await app.eventTypes();
    t.is(types.filter((type) => type === 'approval_expired').length, 5, `${types.join(' ')} (passes expired ${passes.join(' + ')})`);
    t.false(types.includes('approval_decided'));
  });
}
