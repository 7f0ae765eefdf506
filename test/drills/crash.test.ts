// Drill of issue 6: the worker (the gateway process) is killed with SIGKILL after its claim and
// after the write went downstream, before it could report completion.
import test from 'ava';
import { afterDrill, eventually, startDrillEnv, type DrillEnv } from './env.js';

let env: DrillEnv;

test.before(async () => {
  env = await startDrillEnv({ leaseSeconds: 2 });
});

test.after.always(async () => {
  await env?.close();
});

test.serial('worker killed after its claim, before completion: unknown, never written twice, listed under ?state=unknown', async (t) => {
  const key = 'drill-crash-1';
  // The ticket API creates the ticket at once and answers 30 s later: the gateway is mid-write.
  const command = { title: 'crash mid-write', tag: 'crash', delay_ms: 30_000 };
  const pending = env.post('/tickets', command, { 'idempotency-key': key }, 'direct').catch((e: Error) => e);
  await eventually(async () => (await env.count('tickets', 'crash')) === 1);
  const leased = await env.gatewayClient.findByKey(key);
  t.is(leased?.state, 'sent');

  await env.restartGateway(true); // kill -9, then a fresh gateway on the same key store
  t.true((await pending) instanceof Error, 'the agent lost its connection');

  // The lease (2 s) runs out; the operation shows as unknown and is listed.
  const listed = await eventually(async () => {
    const page = await env.gatewayClient.listOperations({ state: 'unknown' });
    return page.items.find((o) => o.idempotency_key === key);
  }, 15_000);
  t.is(listed.state, 'unknown');

  // The agent retries with the same key: the gateway answers unknown and does not write again.
  const retry = await env.post('/tickets', command, { 'idempotency-key': key });
  t.is(retry.status, 409);
  t.is(retry.outcome, 'unknown');
  t.is(retry.body.operation_id, listed.id);
  await afterDrill(t, env, 'tickets', 'crash', 1);

  // A reconciler finds the ticket downstream and resolves the operation with that evidence.
  const ticket = ((await (await fetch(`${env.tickets.url}/tickets?tag=crash`)).json()) as { items: Array<{ id: string }> }).items[0]!;
  const resolved = await env.admin.resolve(listed.id, {
    state: 'succeeded',
    note: 'ticket found in the ticket API by reconciliation',
    provider_ref: ticket.id,
    response: { status: 201, body: ticket as never },
  });
  t.is(resolved.operation.state, 'succeeded');
  const afterResolve = await env.post('/tickets', command, { 'idempotency-key': key });
  t.is(afterResolve.outcome, 'replayed');
  t.is(afterResolve.body.id, ticket.id);

  const timeline = await env.gatewayClient.timeline(listed.id);
  const types = timeline.map((e) => (e as { header?: { type?: string }; type?: string }).header?.type ?? (e as { type?: string }).type);
  t.true(types.includes('lease_expired'), `timeline: ${types.join(',')}`);
  t.true(types.includes('resolved'), `timeline: ${types.join(',')}`);
  await afterDrill(t, env, 'tickets', 'crash', 1);
});

test.serial('a write that fails downstream with a business error is completed as failed and replayed, not retried', async (t) => {
  const key = 'drill-business-failure-1';
  const command = { title: 'rejected', tag: 'business-failure', fail: true };
  const first = await env.post('/tickets', command, { 'idempotency-key': key });
  t.is(first.status, 422);
  t.is(first.outcome, 'created');
  const again = await env.post('/tickets', command, { 'idempotency-key': key });
  t.is(again.status, 422);
  t.is(again.outcome, 'replayed');
  t.is((await env.gatewayClient.findByKey(key))?.state, 'failed');
  await afterDrill(t, env, 'tickets', 'business-failure', 0);
});
