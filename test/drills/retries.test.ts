// Drills of issue 6 over real processes: lost responses, a stampede of copies, an agent killed
// between attempts, and a key reused for another payload.
import test from 'ava';
import Database from 'better-sqlite3';
import path from 'node:path';
import { startScript } from '../helpers/server-process.js';
import { afterDrill, startDrillEnv, type DrillEnv } from './env.js';

let env: DrillEnv;

test.before(async () => {
  env = await startDrillEnv();
});

test.after.always(async () => {
  await env?.close();
});

test.serial('lost response: the gateway completed, the proxy cut the answer; the retry replays and one ticket exists', async (t) => {
  const key = 'drill-lost-response-1';
  const command = { title: 'disk full on db-3', tag: 'lost-response' };
  env.agentProxy.cut(({ method, path }) => method === 'POST' && path === '/tickets');
  // The agent sees a dropped connection after the write happened downstream.
  await t.throwsAsync(env.post('/tickets', command, { 'idempotency-key': key }));
  t.is(env.agentProxy.cuts, 1);
  t.is(await env.count('tickets', 'lost-response'), 1, 'the write happened before the answer was lost');

  // The retry contract: same key, same payload.
  const retry = await env.post('/tickets', command, { 'idempotency-key': key });
  t.is(retry.status, 201);
  t.is(retry.outcome, 'replayed');
  t.true(retry.replayed);
  t.is(retry.body.tag, 'lost-response');

  const op = await env.gatewayClient.findByKey(key);
  t.is(op?.state, 'succeeded');
  t.is(op?.provider_ref, retry.body.id);
  await afterDrill(t, env, 'tickets', 'lost-response', 1);
});

test.serial('lost response between gateway and Gatehouse: the completed report is retried with the same data; one ticket', async (t) => {
  const key = 'drill-lost-report-1';
  const command = { title: 'lost report', tag: 'lost-report' };
  env.gatehouseProxy.cut(({ path, body }) => path.endsWith('/events') && body.includes('"completed"'));
  const r = await env.post('/tickets', command, { 'idempotency-key': key });
  t.is(r.status, 201);
  t.is(r.outcome, 'created');
  t.is(env.gatehouseProxy.cuts, 1);
  t.is((await env.gatewayClient.findByKey(key))?.state, 'succeeded');
  const again = await env.post('/tickets', command, { 'idempotency-key': key });
  t.is(again.outcome, 'replayed');
  await afterDrill(t, env, 'tickets', 'lost-report', 1);
});

test.serial('lost claim answer: the gateway asks by key and never mints a new key; no second write', async (t) => {
  const key = 'drill-lost-claim-1';
  const command = { title: 'lost claim', tag: 'lost-claim' };
  // Cut every answer to this key's claims: the first claim lands, the gateway never sees the lease.
  env.gatehouseProxy.cut(({ method, path }) => method === 'POST' && path === '/v1/operations', 1);
  const r = await env.post('/tickets', command, { 'idempotency-key': key });
  // The operation is leased by a claim whose answer nobody got: in progress, never executed twice.
  t.true(['in_progress', 'unknown'].includes(r.outcome ?? ''), `outcome ${r.outcome}`);
  const op = await env.gatewayClient.findByKey(key);
  t.truthy(op);
  t.is(await env.count('tickets', 'lost-claim'), 0);
  await afterDrill(t, env, 'tickets', 'lost-claim', 0);
});

test.serial('20 simultaneous copies with one key: one ticket, every answer is that ticket or in progress', async (t) => {
  const key = 'drill-stampede-1';
  const command = { title: 'stampede', tag: 'stampede', delay_ms: 700 };
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => env.post('/tickets', command, { 'idempotency-key': key }, 'direct')),
  );
  const outcomes = answers.map((a) => a.outcome);
  t.is(outcomes.filter((o) => o === 'created').length, 1, `outcomes: ${outcomes.join(',')}`);
  t.true(outcomes.every((o) => o === 'created' || o === 'replayed' || o === 'in_progress'), `outcomes: ${outcomes.join(',')}`);
  const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.id));
  t.is(ids.size, 1);
  const later = await env.post('/tickets', command, { 'idempotency-key': key });
  t.is(later.outcome, 'replayed');
  t.true(ids.has(later.body.id));
  await afterDrill(t, env, 'tickets', 'stampede', 1);
});

test.serial('the agent process is killed between attempts and restarted: it finds its key and gets the replay', async (t) => {
  const store = path.join(env.tmp, 'agent-keys.db');
  const args = [
    '--gatehouse', env.gatehouse.url,
    '--api-key', env.gatewayKey,
    '--upstream', env.tickets.url,
    '--store', store,
    '--keys', env.keysFile,
    '--intent', 'task-812:create-ticket',
    '--title', 'disk full on db-3',
    '--tag', 'agent-kill',
  ];
  const first = startScript('examples/agent.ts', [...args, '--hang']);
  const line = await first.waitFor(/result: (.*)/);
  const result1 = JSON.parse(line[1]!);
  t.is(result1.kind, 'created');
  await first.kill9(); // the agent dies before it could record that the step is done

  const keys = new Database(store, { readonly: true });
  const row = keys.prepare('SELECT idempotency_key FROM intent_keys WHERE intent = ?').get('task-812:create-ticket') as { idempotency_key: string };
  keys.close();
  t.is(row.idempotency_key, result1.idempotencyKey, 'the key was durable in the store');

  const second = startScript('examples/agent.ts', args);
  const result2 = JSON.parse((await second.waitFor(/result: (.*)/))[1]!);
  await second.exited;
  t.is(result2.kind, 'replayed');
  t.is(result2.idempotencyKey, result1.idempotencyKey);
  t.is(result2.response.body.id, result1.response.body.id);
  await afterDrill(t, env, 'tickets', 'agent-kill', 1);

  // A person asking on purpose for a second, separate ticket: a new intent, a new key, a new ticket.
  const third = startScript('examples/agent.ts', args.map((a) => (a === 'task-812:create-ticket' ? 'task-812:create-ticket#2' : a)));
  const result3 = JSON.parse((await third.waitFor(/result: (.*)/))[1]!);
  await third.exited;
  t.is(result3.kind, 'created');
  t.not(result3.idempotencyKey, result1.idempotencyKey);
  await afterDrill(t, env, 'tickets', 'agent-kill', 2);
});

test.serial('a key reused with a changed payload is a conflict and writes nothing', async (t) => {
  const key = 'drill-conflict-1';
  const first = await env.post('/tickets', { title: 'original', tag: 'conflict' }, { 'idempotency-key': key });
  t.is(first.outcome, 'created');
  const changed = await env.post('/tickets', { title: 'changed', tag: 'conflict' }, { 'idempotency-key': key });
  t.is(changed.status, 422);
  t.is(changed.outcome, 'conflict');
  t.is(changed.body.error.code, 'fingerprint_mismatch');
  t.is(changed.body.error.operation_id, first.operationId);
  // Nothing of the stored command or response leaks into the conflict answer.
  t.false(JSON.stringify(changed.body).includes('original'));
  await afterDrill(t, env, 'tickets', 'conflict', 1);
});
