// Drills of issue 6 that need route policies: one ticket per alert (business_key), one deploy per
// environment at a time (exclusive_scope), and a deploy that a person must approve first.
import test from 'ava';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { startExample } from '../helpers/server-process.js';
import { afterDrill, eventually, sleep, startDrillEnv, type DrillEnv } from './env.js';

const config = {
  policies: [
    { method: 'POST', route: '/alerts/*/tickets', business_key: 'alert:{/alert_id}' },
    { method: 'POST', route: '/deploys', exclusive_scope: 'deploy:{/environment}' },
    {
      method: 'POST',
      route: '/prod/deploys',
      exclusive_scope: 'deploy:{/environment}',
      approval: { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 600 },
    },
  ],
};

let env: DrillEnv;

test.before(async () => {
  env = await startDrillEnv({ config });
});

test.after.always(async () => {
  await env?.close();
});

test.serial('two agent runs with different keys for one alert: one ticket, the second reused', async (t) => {
  const first = await env.post(
    '/alerts/A-77/tickets',
    { alert_id: 'A-77', title: 'db-3 disk full', tag: 'business-key' },
    { 'idempotency-key': 'drill-bk-run-1', 'x-agent-run-id': 'run-1' },
  );
  t.is(first.status, 201);
  t.is(first.outcome, 'created');
  const second = await env.post(
    '/alerts/A-77/tickets',
    { alert_id: 'A-77', title: 'Disk full on db-3 (second agent)', tag: 'business-key' },
    { 'idempotency-key': 'drill-bk-run-2', 'x-agent-run-id': 'run-2' },
  );
  t.is(second.outcome, 'reused');
  t.is(second.operationId, first.operationId);
  t.is(second.body.id, first.body.id, 'the second run gets the first run\'s ticket');
  await afterDrill(t, env, 'tickets', 'business-key', 1);
});

test.serial('two deploys to one environment: the second is scope_busy until the first finishes', async (t) => {
  const first = env.post('/deploys', { environment: 'staging', version: '1.4.0', tag: 'scope', delay_ms: 2500 }, { 'idempotency-key': 'drill-scope-1' }, 'direct');
  await eventually(async () => (await env.count('deploys', 'scope')) === 1);
  const second = await env.post('/deploys', { environment: 'staging', version: '1.5.0', tag: 'scope' }, { 'idempotency-key': 'drill-scope-2' });
  t.is(second.status, 409);
  t.is(second.outcome, 'conflict');
  t.is(second.body.error.code, 'scope_busy');
  const done = await first;
  t.is(done.outcome, 'created');
  t.is(second.body.error.operation_id, done.operationId, 'scope_busy names the holding operation');
  t.is(await env.count('deploys', 'scope'), 1);
  t.is(await env.gatewayClient.findByKey('drill-scope-2'), null, 'a scope_busy claim creates no operation');

  // Once the scope is free, the same key may be claimed again.
  const again = await env.post('/deploys', { environment: 'staging', version: '1.5.0', tag: 'scope' }, { 'idempotency-key': 'drill-scope-2' });
  t.is(again.outcome, 'created');
  // Another environment never waited on staging.
  await afterDrill(t, env, 'deploys', 'scope', 2);
});

test.serial('a deploy needing approval: the agent waits, a person approves, the retry executes once with the grant checked', async (t) => {
  const key = 'drill-approval-1';
  const command = { environment: 'prod', version: '2.0.0', tag: 'approval' };
  const asked = await env.post('/prod/deploys', command, { 'idempotency-key': key });
  t.is(asked.status, 202);
  t.is(asked.outcome, 'approval_required');
  const approvalId: string = asked.body.approval_id;
  t.regex(approvalId, /^apr_/);
  t.is(asked.body.approval_url, `${env.gatehouse.url}/ui/approvals/${approvalId}`);
  t.is(await env.count('deploys', 'approval'), 0);

  // The agent waits and retries; still pending, still nothing written.
  await sleep(200);
  const stillPending = await env.post('/prod/deploys', command, { 'idempotency-key': key });
  t.is(stillPending.outcome, 'approval_required');
  t.is(stillPending.body.approval_id, approvalId);

  // A person reads what they approve (the fingerprint they were shown) and approves.
  const pending = await env.approver.listApprovals({ state: 'pending' });
  const approval = pending.items.find((a) => a.id === approvalId);
  t.truthy(approval);
  t.is(approval!.idempotency_key, key);
  await env.approver.decide(approvalId, { decision: 'approve', fingerprint: approval!.fingerprint, reason: 'change window open' });

  const executed = await env.post('/prod/deploys', command, { 'idempotency-key': key });
  t.is(executed.status, 201);
  t.is(executed.outcome, 'created');
  const replay = await env.post('/prod/deploys', command, { 'idempotency-key': key });
  t.is(replay.outcome, 'replayed');
  await afterDrill(t, env, 'deploys', 'approval', 1);

  // The same approval does not cover another payload.
  const changed = await env.post('/prod/deploys', { ...command, version: '2.0.1' }, { 'idempotency-key': key });
  t.is(changed.outcome, 'conflict');
  await afterDrill(t, env, 'deploys', 'approval', 1);
});

test.serial('a gateway that pinned other keys refuses the grant and writes nothing', async (t) => {
  const key = 'drill-approval-wrong-pin';
  const command = { environment: 'prod', version: '3.0.0', tag: 'wrong-pin' };
  const asked = await env.post('/prod/deploys', command, { 'idempotency-key': key });
  t.is(asked.outcome, 'approval_required', JSON.stringify(asked.body));
  const approval = await env.approver.getApproval(asked.body.approval_id);
  await env.approver.decide(approval.id, { decision: 'approve', fingerprint: approval.fingerprint, reason: 'ok' });

  // A gateway whose pinned key is not the server's (a swapped key, a man in the middle).
  const { publicKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  const realKeys = (await (await fetch(`${env.gatehouse.url}/v1/keys`)).json()) as { keys: Array<{ key_id: string }> };
  const wrongKeysFile = path.join(env.tmp, 'wrong-keys.json');
  writeFileSync(wrongKeysFile, JSON.stringify({ keys: realKeys.keys.map((k) => ({ key_id: k.key_id, public_key: der.subarray(der.length - 32).toString('base64') })) }));
  const args = [...env.gatewayArgs];
  args[args.indexOf('--keys') + 1] = wrongKeysFile;
  args[args.indexOf('--key-store') + 1] = path.join(env.tmp, 'wrong-gateway-keys.db');
  const wrongGateway = await startExample('gateway.ts', args);
  try {
    const res = await fetch(`${wrongGateway.url}/prod/deploys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(command),
    });
    t.is(res.status, 502);
    t.is(((await res.json()) as { error: { code: string } }).error.code, 'grant_invalid');
  } finally {
    await wrongGateway.process.stop();
  }
  const op = await env.gatewayClient.findByKey(key);
  t.is(op?.state, 'canceled', 'the refused write is reported as not made');
  await afterDrill(t, env, 'deploys', 'wrong-pin', 0);
});
