import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, completedOperation, eventTypes, report, startAppWithPolicies } from './claims.js';

const alert = (eventId: string, extra: Record<string, unknown> = {}) => ({
  method: 'POST', route: '/pages', command: { event_id: eventId, text: 'disk full' }, business_key: `alert:${eventId}`, ...extra,
});
const deploy = (version: string, agentRun: string) => ({
  method: 'POST', route: '/deploys', command: { environment: 'prod', version }, exclusive_scope: 'deploy:prod', agent_run_id: agentRun,
});

for (const kind of await storeKinds()) {
  test(`[${kind}] two agent runs with different keys and one business_key make one operation; the second is reused`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'run-a-key', alert('E1', { agent_run_id: 'run-a' }));
    t.is(first.status, 201);
    const second = await claim(app, gw, 'run-b-key', alert('E1', { agent_run_id: 'run-b' }));
    t.is(second.status, 200);
    t.is(second.body.outcome, 'reused');
    t.false(second.body.execute);
    t.is(second.body.operation.id, first.body.operation.id);
    t.is(second.body.operation.idempotency_key, 'run-a-key');
    t.is(await app.context.store.db.selectFrom('operations').select('id').execute().then((r) => r.length), 1);
    // Once the first finishes, a reuse carries its stored response.
    await report(app, gw, first.body.operation.id, { type: 'sent', lease_token: first.body.lease.token });
    const response = { status: 201, body: { page: 'P-1' } };
    await report(app, gw, first.body.operation.id, { type: 'completed', lease_token: first.body.lease.token, outcome: 'succeeded', response });
    const third = await claim(app, gw, 'run-c-key', alert('E1', { agent_run_id: 'run-c' }));
    t.is(third.body.outcome, 'reused');
    t.deepEqual(third.body.response, response);
    t.deepEqual(third.body.operation.response, response);
    t.deepEqual(await eventTypes(app, 'acme', first.body.operation.id), ['attempted', 'reused', 'sent', 'completed', 'reused']);
    const reused = await app.context.store.db.selectFrom('events').select(['idempotency_key', 'agent_run_id'])
      .where('account_id', '=', 'acme').where('type', '=', 'reused').orderBy('seq').execute();
    t.deepEqual(reused, [{ idempotency_key: 'run-b-key', agent_run_id: 'run-b' }, { idempotency_key: 'run-c-key', agent_run_id: 'run-c' }]);
  });

  test(`[${kind}] concurrent claims with different keys and one business_key create exactly one operation`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(app, gw, `bk-${i}`, alert('E2'))));
    t.is(answers.filter((a) => a.status === 201).length, 1);
    t.true(answers.filter((a) => a.status !== 201).every((a) => a.status === 200 && a.body.outcome === 'reused'), answers.map((a) => a.status).join());
    t.is(await app.context.store.db.selectFrom('operations').select('id').execute().then((r) => r.length), 1);
  });

  test(`[${kind}] business keys are per account: another account with the same business_key creates its own operation`, async (t) => {
    const app = await startTestApp(t, kind);
    const acme = await app.keyFor('acme', 'gateway');
    const globex = await app.keyFor('globex', 'gateway');
    t.is((await claim(app, acme, 'same', alert('E3'))).status, 201);
    t.is((await claim(app, globex, 'same', alert('E3'))).status, 201);
  });

  test(`[${kind}] two deploys in one exclusive_scope: the second gets scope_busy until the first is terminal, then claims`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    // A version no operation id (its alphabet has 'v' and '1') or hex digest can contain by chance.
    const first = await claim(app, gw, 'deploy-1', deploy('release-1.4.2', 'run-1'));
    t.is(first.status, 201);
    const busy = await claim(app, gw, 'deploy-2', deploy('v2', 'run-2'));
    t.is(busy.status, 409);
    t.is(busy.body.error.code, 'scope_busy');
    t.is(busy.body.error.operation_id, first.body.operation.id);
    t.false(busy.text.includes('release-1.4.2'), 'the refusal names the holder, not its command');
    const busyAgain = await claim(app, gw, 'deploy-2', deploy('v2', 'run-2'));
    t.is(busyAgain.body.error.code, 'scope_busy', 'a refused key created nothing and may be claimed again');
    t.is(await app.context.store.db.selectFrom('operations').select('id').execute().then((r) => r.length), 1);
    // The refusals are recorded against the holding operation, naming who asked.
    t.deepEqual(await eventTypes(app, 'acme', first.body.operation.id), ['attempted', 'scope_busy', 'scope_busy']);
    const busyEvent = await app.context.store.db.selectFrom('events').select(['idempotency_key', 'agent_run_id', 'state'])
      .where('account_id', '=', 'acme').where('type', '=', 'scope_busy').executeTakeFirstOrThrow();
    t.deepEqual(busyEvent, { idempotency_key: 'deploy-2', agent_run_id: 'run-2', state: 'running' });

    await report(app, gw, first.body.operation.id, { type: 'sent', lease_token: first.body.lease.token });
    t.is((await claim(app, gw, 'deploy-2', deploy('v2', 'run-2'))).body.error.code, 'scope_busy', 'sent is not terminal');
    await report(app, gw, first.body.operation.id, { type: 'completed', lease_token: first.body.lease.token, outcome: 'succeeded', response: { status: 200 } });
    const second = await claim(app, gw, 'deploy-2', deploy('v2', 'run-2'));
    t.is(second.status, 201, second.text);
    t.true(second.body.execute);
    t.is((await claim(app, gw, 'deploy-3', deploy('v3', 'run-3'))).body.error.code, 'scope_busy');
    const canceled = await report(app, gw, second.body.operation.id, { type: 'canceled', lease_token: second.body.lease.token });
    t.is(canceled.status, 200);
    t.is((await claim(app, gw, 'deploy-3', deploy('v3', 'run-3'))).status, 201, 'canceled is terminal too');
  });

  test(`[${kind}] concurrent deploys with different keys in one scope: exactly one is created`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(app, gw, `deploy-c-${i}`, deploy(`v${i}`, `run-${i}`))));
    t.is(answers.filter((a) => a.status === 201).length, 1);
    t.true(answers.filter((a) => a.status !== 201).every((a) => a.body.error?.code === 'scope_busy'), answers.map((a) => a.status).join());
  });

  test(`[${kind}] policy templates produce the business key and scope from the command, and win over body values`, async (t) => {
    const app = await startAppWithPolicies(t, kind, [
      { method: 'POST', route: '/deploys', exclusive_scope: 'deploy:{/environment}', business_key: 'release:{/version}' },
    ]);
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'tpl-1', { ...deploy('v9', 'run-1'), exclusive_scope: 'my-own-scope' });
    t.is(first.status, 201);
    t.is(first.body.operation.exclusive_scope, 'deploy:prod');
    t.is(first.body.operation.business_key, 'release:v9');
    const other = await claim(app, gw, 'tpl-2', { ...deploy('v10', 'run-2'), exclusive_scope: 'another-scope' });
    t.is(other.body.error.code, 'scope_busy');
    await completedOperation(app, gw, 'unrelated', { status: 200 }, { method: 'POST', route: '/tickets', command: {} });
    const same = await claim(app, gw, 'tpl-3', deploy('v9', 'run-3'));
    t.is(same.body.outcome, 'reused');
  });
}
