// An operation that can go on only with a new approval (its request ran out undecided, or its
// grant before a lease was taken) holds its exclusive scope against nobody: the next claim on
// the scope takes it over, and the abandoned operation's own retry must then wait its turn.
import test, { type ExecutionContext } from 'ava';
import { storeKinds } from '../helpers/stores.js';
import { ACCOUNT, newKey, startApprovalApp, type ApprovalApp } from '../approvals/approval-app.js';
import { eventTypes, report } from './claims.js';

/** Deploys need one approval (request open 60 s, grant valid 30 s); hotfixes share their scope and need none. */
const POLICIES = {
  policies: [
    { method: 'POST', route: '/deploys', exclusive_scope: 'deploy:{/environment}', approval: { approvers: 1, request_ttl_seconds: 60, ttl_seconds: 30 } },
    { method: 'POST', route: '/hotfixes', exclusive_scope: 'deploy:{/environment}' },
  ],
};
const deploy = (version: string) => ({ method: 'POST', route: '/deploys', command: { environment: 'prod', version } });
const hotfix = (version: string) => ({ method: 'POST', route: '/hotfixes', command: { environment: 'prod', version } });

/** A deploy claimed under key k1 and approved, whose grant then ran out with no lease taken. */
async function grantRunOut(t: ExecutionContext, app: ApprovalApp): Promise<{ k1: string; abandonedId: string }> {
  const k1 = newKey();
  const abandoned = await app.claim(k1, deploy('v1'));
  t.is((await app.decide(abandoned.body.approval.id, 'approve', abandoned.body.operation.fingerprint)).status, 200);
  app.clock.advance(31);
  return { k1, abandonedId: abandoned.body.operation.id };
}

async function approvalsOf(app: ApprovalApp, operationId: string): Promise<string[]> {
  const rows = await app.context.store.db.selectFrom('approvals').select('state')
    .where('account_id', '=', ACCOUNT).where('operation_id', '=', operationId).orderBy('requested_at').execute();
  return rows.map((r) => r.state);
}

async function scopeHolder(app: ApprovalApp): Promise<string[]> {
  const rows = await app.context.store.db.selectFrom('scope_holds').select('operation_id')
    .where('account_id', '=', ACCOUNT).where('scope', '=', 'deploy:prod').execute();
  return rows.map((r) => r.operation_id);
}

for (const kind of await storeKinds()) {
  test(`[${kind}] a request that ran out undecided frees the scope: another key takes it, the abandoned operation's retry gets scope_busy and asks nothing`, async (t) => {
    const app = await startApprovalApp(t, kind, POLICIES);
    const k1 = newKey();
    const abandoned = await app.claim(k1, deploy('v1'));
    t.is(abandoned.status, 202, abandoned.text);
    const abandonedId = abandoned.body.operation.id;
    app.clock.advance(61);

    const next = await app.claim(newKey(), deploy('v2'));
    t.is(next.status, 202, next.text);
    t.is(next.body.outcome, 'approval_required');
    const nextId = next.body.operation.id;
    t.deepEqual(await scopeHolder(app), [nextId]);
    // Its expiry is recorded once, by the sweeper or by the take-over, whichever came first.
    t.deepEqual(await eventTypes(app, ACCOUNT, abandonedId), ['attempted', 'approval_requested', 'approval_expired']);

    const retry = await app.claim(k1, deploy('v1'));
    t.is(retry.status, 409, retry.text);
    t.is(retry.body.error.code, 'scope_busy');
    t.is(retry.body.error.operation_id, nextId);
    t.deepEqual(await approvalsOf(app, abandonedId), ['expired'], 'the refused retry made no new approval');
    t.deepEqual(await eventTypes(app, ACCOUNT, nextId), ['attempted', 'approval_requested', 'scope_busy']);

    // Once the new holder ends, the abandoned operation's retry asks again and holds the scope again.
    t.is((await app.decide(next.body.approval.id, 'deny', next.body.operation.fingerprint)).status, 200);
    const asksAgain = await app.claim(k1, deploy('v1'));
    t.is(asksAgain.status, 202, asksAgain.text);
    t.not(asksAgain.body.approval.id, abandoned.body.approval.id);
    t.deepEqual(await approvalsOf(app, abandonedId), ['expired', 'pending']);
    t.deepEqual(await scopeHolder(app), [abandonedId]);
    const busy = await app.claim(newKey(), hotfix('v3'));
    t.is(busy.body.error?.code, 'scope_busy', busy.text);
    t.is(busy.body.error.operation_id, abandonedId);
  });

  test(`[${kind}] a grant that ran out before a lease frees the scope: another key takes it, the approved operation's retry gets scope_busy`, async (t) => {
    const app = await startApprovalApp(t, kind, POLICIES);
    const { k1, abandonedId } = await grantRunOut(t, app);

    const hot = await app.claim(newKey(), hotfix('v2'));
    t.is(hot.status, 201, hot.text);
    t.true(hot.body.execute);
    const hotId = hot.body.operation.id;
    t.deepEqual(await scopeHolder(app), [hotId]);
    // The take-over recorded the grant's expiry (nothing sweeps grants): the operation awaits a new approval.
    t.deepEqual(await eventTypes(app, ACCOUNT, abandonedId), ['attempted', 'approval_requested', 'approval_decided', 'approved', 'approval_expired']);
    const expiry = await app.context.store.db.selectFrom('events').select(['actor', 'state'])
      .where('account_id', '=', ACCOUNT).where('operation_id', '=', abandonedId).where('type', '=', 'approval_expired').executeTakeFirstOrThrow();
    t.deepEqual(expiry, { actor: null, state: 'awaiting_approval' });

    const retry = await app.claim(k1, deploy('v1'));
    t.is(retry.status, 409, retry.text);
    t.is(retry.body.error.code, 'scope_busy');
    t.is(retry.body.error.operation_id, hotId);
    t.deepEqual(await approvalsOf(app, abandonedId), ['expired'], 'the refused retry made no new approval');

    await report(app, app.gateway, hotId, { type: 'canceled', lease_token: hot.body.lease.token });
    const asksAgain = await app.claim(k1, deploy('v1'));
    t.is(asksAgain.status, 202, asksAgain.text);
    t.deepEqual(await approvalsOf(app, abandonedId), ['expired', 'pending']);
    t.deepEqual(await scopeHolder(app), [abandonedId]);
    t.deepEqual(await eventTypes(app, ACCOUNT, abandonedId),
      ['attempted', 'approval_requested', 'approval_decided', 'approved', 'approval_expired', 'approval_requested'], 'the expiry is recorded once');
  });

  test(`[${kind}] a live approval still holds the scope: pending, approved with a valid grant, and leased after its grant ran out`, async (t) => {
    const app = await startApprovalApp(t, kind, POLICIES);
    const k1 = newKey();
    const holder = await app.claim(k1, deploy('v1'));
    const holderId = holder.body.operation.id;
    // Margins of whole seconds: a loaded machine spends real ones between the steps.
    app.clock.advance(50);
    const whilePending = await app.claim(newKey(), hotfix('v2'));
    t.is(whilePending.body.error?.code, 'scope_busy', whilePending.text);
    t.is(whilePending.body.error.operation_id, holderId);

    t.is((await app.decide(holder.body.approval.id, 'approve', holder.body.operation.fingerprint)).status, 200);
    app.clock.advance(20);
    const whileGranted = await app.claim(newKey(), hotfix('v2'));
    t.is(whileGranted.body.error?.code, 'scope_busy', whileGranted.text);
    t.is(whileGranted.body.error.operation_id, holderId);

    const leased = await app.claim(k1, deploy('v1'));
    t.is(leased.status, 200, leased.text);
    t.is(leased.body.outcome, 'approved');
    app.clock.advance(15);
    // The grant ran out, but the lease holder is at work: only its `sent` report learns of it.
    const whileLeased = await app.claim(newKey(), hotfix('v2'));
    t.is(whileLeased.body.error?.code, 'scope_busy', whileLeased.text);
    t.is(whileLeased.body.error.operation_id, holderId);
    t.deepEqual(await scopeHolder(app), [holderId]);
    t.false((await eventTypes(app, ACCOUNT, holderId)).includes('approval_expired'));
  });

  test(`[${kind}] concurrent claims racing for one abandoned scope, its own retry among them: exactly one takes it, the others get scope_busy naming it`, async (t) => {
    const app = await startApprovalApp(t, kind, POLICIES);
    const { k1, abandonedId } = await grantRunOut(t, app);

    const others = Array.from({ length: 12 }, (_, i) => () => app.claim(newKey(), i % 2 ? hotfix(`v${i}`) : deploy(`v${i}`)));
    const answers = await Promise.all([...others.slice(0, 6), () => app.claim(k1, deploy('v1')), ...others.slice(6)].map((claim) => claim()));
    const winners = answers.filter((a) => a.status === 201 || a.status === 202);
    t.is(winners.length, 1, answers.map((a) => a.status).join());
    const winnerId = winners[0]!.body.operation.id;
    for (const a of answers.filter((x) => x !== winners[0])) {
      t.is(a.body.error?.code, 'scope_busy', a.text);
      t.is(a.body.error.operation_id, winnerId);
    }
    t.deepEqual(await scopeHolder(app), [winnerId]);
    const types = await eventTypes(app, ACCOUNT, abandonedId);
    t.is(types.filter((type) => type === 'approval_expired').length, 1, types.join(' '));
    // The abandoned operation asked again only if it won; a new operation exists only if one of the others did.
    t.deepEqual(await approvalsOf(app, abandonedId), winnerId === abandonedId ? ['expired', 'pending'] : ['expired']);
    t.is(await app.context.store.db.selectFrom('operations').select('id').execute().then((r) => r.length), winnerId === abandonedId ? 1 : 2);
  });
}
