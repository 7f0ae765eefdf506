import test from 'ava';
import path from 'node:path';
import { openContext } from '../../src/context.js';
import type { Principal } from '../../src/principals/roles.js';
import { storeKinds } from '../helpers/stores.js';
import { freePort } from '../helpers/server-process.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { ACCOUNT, newKey, payment, paymentsPolicy, startApprovalApp } from './approval-app.js';

const SECRET = 'whsec_test_only';
const approvalIds = (bodies: Array<{ body: string }>) => bodies.map((r) => JSON.parse(r.body).approval_id as string);

for (const kind of await storeKinds()) {
  test(`[${kind}] an approval request whose transaction rolls back is never delivered; the committed ones around it are, once each`, async (t) => {
    const hook = await startReceiver();
    t.teardown(() => hook.close());
    const app = await startApprovalApp(t, kind, paymentsPolicy({}, { webhook: { url: hook.url, secret: SECRET } }));
    const first = await app.claim(newKey(), payment());
    t.is(first.status, 202, first.text);
    await hook.until(1);

    // The request is made, then the unit fails: the approval, its outbox row and the wake-up all go.
    let rolledBack: string | undefined;
    const requestedBy: Principal = { id: 'prn_test', account_id: ACCOUNT, roles: ['gateway'], name: 'test' };
    const op = first.body.operation;
    await t.throwsAsync(app.context.store.transact(async (trx, work) => {
      const view = await app.context.approvals.request(trx, work, {
        operation: { ...op, approval_id: null }, requestedBy, policy: { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 3600 },
        summary: null, command: { amount: 1 },
      });
      rolledBack = view.id;
      throw new Error('the claim failed after the approval request');
    }), { message: /failed after the approval request/ });
    t.truthy(rolledBack);

    const second = await app.claim(newKey(), payment(99));
    t.is(second.status, 202, second.text);
    await hook.until(2);
    await app.context.approvals.webhook.idle();
    t.deepEqual(approvalIds(hook.received), [first.body.approval.id, second.body.approval.id]);
    t.is(await app.context.store.db.selectFrom('approvals').select('id').where('id', '=', rolledBack!).executeTakeFirst(), undefined);
    t.is(await app.context.approvals.webhook.backlog(), 0);
  });

  test(`[${kind}] deliveries the receiver could not take stay in the outbox, counted as the backlog, and go out once it answers`, async (t) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`;
    const app = await startApprovalApp(t, kind, paymentsPolicy({}, { webhook: { url, secret: SECRET } }));
    app.context.approvals.webhook.backoffMs = Array(50).fill(100);
    const claims = [];
    for (let i = 0; i < 3; i++) claims.push(await app.claim(newKey(), payment(100 + i)));
    t.is(await app.context.approvals.webhook.backlog(), 3);
    const metrics = await app.request('GET', '/metrics', { key: app.adminKey });
    t.true(metrics.text.includes('gatehouse_webhook_backlog 3'), metrics.text);
    const hook = await startReceiver(port);
    t.teardown(() => hook.close());
    await hook.until(3);
    await app.context.approvals.webhook.idle();
    t.deepEqual(approvalIds(hook.received).sort(), claims.map((c) => c.body.approval.id as string).sort());
    t.is(await app.context.approvals.webhook.backlog(), 0);
  });
}

if ((await storeKinds()).includes('postgres')) {
  test('[postgres] two instances on one database deliver each approval once: a row one of them claimed is skipped by the other', async (t) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`;
    const a = await startApprovalApp(t, 'postgres', paymentsPolicy({}, { webhook: { url, secret: SECRET } }));
    const b = await openContext({ ...a.store.config, policiesFile: path.join(a.store.dataDir, 'policies.json') });
    t.teardown(async () => {
      await b.approvals.webhook.stop();
      await b.close();
    });
    for (const context of [a.context, b]) context.approvals.webhook.backoffMs = Array(50).fill(150);
    b.approvals.webhook.start();
    // The receiver is down while the requests pile up, so both instances retry the same rows at once.
    const claims = [];
    for (let i = 0; i < 25; i++) claims.push(await a.claim(newKey(), payment(200 + i)));
    t.is(await b.approvals.webhook.backlog(), 25);
    const hook = await startReceiver(port);
    t.teardown(() => hook.close());
    await hook.until(25);
    await Promise.all([a.context.approvals.webhook.idle(), b.approvals.webhook.idle()]);
    const delivered = approvalIds(hook.received);
    t.is(delivered.length, 25, 'no approval was posted twice');
    t.deepEqual(delivered.sort(), claims.map((c) => c.body.approval.id as string).sort());
  });
}
