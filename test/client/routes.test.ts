// Every method of the typed client against a real `gatehouse serve`: the shapes the client
// assumes are the shapes the server sends.
import test from 'ava';
import path from 'node:path';
import { GatehouseClient, GatehouseError, type Operation } from '../../src/client/index.js';
import { addPrincipal, startGatehouse, stopAll, tempDir, type GatehouseServer } from '../helpers/server-process.js';

let server: GatehouseServer;
let admin: GatehouseClient;
let gateway: GatehouseClient;
let auditor: GatehouseClient;
let cleanup: () => void;

test.before(async () => {
  const tmp = tempDir('gatehouse-client-routes-');
  cleanup = tmp.cleanup;
  server = await startGatehouse({ dataDir: path.join(tmp.dir, 'data') });
  admin = new GatehouseClient({ baseUrl: server.url, apiKey: server.adminKey });
  gateway = new GatehouseClient({ baseUrl: server.url, apiKey: await addPrincipal(server.dataDir, 'acme', ['gateway']) });
  auditor = new GatehouseClient({ baseUrl: server.url, apiKey: await addPrincipal(server.dataDir, 'acme', ['auditor']) });
});

test.after.always(async () => {
  await stopAll();
  cleanup?.();
});

async function finished(key: string): Promise<Operation> {
  const claim = await gateway.claim(key, { method: 'POST', route: '/tickets', command: { title: key } });
  if (claim.outcome !== 'created') throw new Error(claim.outcome);
  await gateway.reportEvent(claim.operation.id, { type: 'sent', lease_token: claim.lease.token });
  const done = await gateway.reportEvent(claim.operation.id, {
    type: 'completed',
    lease_token: claim.lease.token,
    outcome: 'succeeded',
    response: { status: 201, body: { id: 't1' } },
  });
  return done.operation;
}

test.serial('health, keys and fingerprint', async (t) => {
  t.truthy(await new GatehouseClient({ baseUrl: server.url }).healthz());
  const keys = await new GatehouseClient({ baseUrl: server.url }).keys();
  t.true(keys.length >= 1);
  t.regex(keys[0]!.public_key, /^[A-Za-z0-9+/]+=*$/);
  t.regex(await gateway.fingerprint({ method: 'POST', route: '/tickets', command: { title: 'x' } }), /^[0-9a-f]{64}$/);
});

test.serial('claim, reports, replay, find by key, get, timeline', async (t) => {
  const op = await finished('routes-1');
  t.is(op.state, 'succeeded');
  const replay = await gateway.claim('routes-1', { method: 'POST', route: '/tickets', command: { title: 'routes-1' } });
  t.like(replay, { outcome: 'replayed', status: 200, execute: false, response: { status: 201 } });
  t.is((await gateway.findByKey('routes-1'))?.id, op.id);
  t.is(await gateway.findByKey('routes-never'), null);
  t.is((await gateway.getOperation(op.id)).state, 'succeeded');
  const timeline = await gateway.timeline(op.id);
  t.true(timeline.length >= 4, JSON.stringify(timeline).slice(0, 400));
});

test.serial('in_progress is a value with Retry-After; fingerprint_mismatch is a typed error', async (t) => {
  const claim = await gateway.claim('routes-2', { method: 'POST', route: '/tickets', command: { title: 'a' } });
  t.is(claim.outcome, 'created');
  const again = await gateway.claim('routes-2', { method: 'POST', route: '/tickets', command: { title: 'a' } });
  t.like(again, { outcome: 'in_progress', status: 409 });
  t.true((again.retryAfterSeconds ?? 0) >= 1);
  const e = await t.throwsAsync(gateway.claim('routes-2', { method: 'POST', route: '/tickets', command: { title: 'b' } }), { instanceOf: GatehouseError });
  t.is(e!.code, 'fingerprint_mismatch');
  t.is(e!.status, 422);
  t.is(e!.extra.operation_id, claim.operation.id);
});

test.serial('errors carry code and status: unauthenticated, forbidden, not_found, invalid_route', async (t) => {
  const anon = new GatehouseClient({ baseUrl: server.url, apiKey: 'gh_nope' });
  t.is((await t.throwsAsync(anon.findByKey('x'), { instanceOf: GatehouseError }))!.code, 'unauthenticated');
  t.is((await t.throwsAsync(auditor.claim('x', { method: 'POST', route: '/t', command: {} }), { instanceOf: GatehouseError }))!.status, 403);
  t.is((await t.throwsAsync(gateway.getOperation('op_missing'), { instanceOf: GatehouseError }))!.code, 'not_found');
  t.is((await t.throwsAsync(gateway.claim('x', { method: 'POST', route: '/a/../b', command: {} }), { instanceOf: GatehouseError }))!.code, 'invalid_route');
});

test.serial('list by state and resolve an unknown operation', async (t) => {
  const claim = await gateway.claim('routes-3', { method: 'POST', route: '/tickets', command: { title: 'c' }, lease_seconds: 1 });
  t.is(claim.outcome, 'created');
  let listed: Operation | undefined;
  for (let i = 0; i < 50 && !listed; i++) {
    await new Promise((r) => setTimeout(r, 200));
    listed = (await gateway.listOperations({ state: 'unknown', limit: 50 })).items.find((o) => o.id === claim.operation.id);
  }
  t.truthy(listed);
  const resolved = await admin.resolve(claim.operation.id, { state: 'failed', note: 'not found downstream' });
  t.is(resolved.operation.state, 'failed');
});

test.serial('audit events, checkpoints, export and principals', async (t) => {
  const page = await auditor.auditEvents({ account_id: 'acme', limit: 5 });
  t.is(page.items.length, 5);
  t.is(page.items[0]!.header.seq, 1);
  t.regex(page.items[0]!.hash, /^[0-9a-f]{64}$/);
  const cp = await admin.createCheckpoint('acme');
  t.true(cp.tree_size >= 5);
  t.regex(cp.note, /^gatehouse\//);
  const latest = await auditor.latestCheckpoint('acme');
  t.is(latest.tree_size, cp.tree_size);
  const ndjson = await auditor.exportAudit('acme');
  const first = JSON.parse(ndjson.split('\n')[0]!);
  t.is(first.format, 'gatehouse-export');
  const created = await admin.createPrincipal({ account_id: 'acme', roles: ['approver'], name: 'alice' });
  t.regex(created.key, /^gh_/);
  t.is(created.principal.account_id, 'acme');
  const approvals = await new GatehouseClient({ baseUrl: server.url, apiKey: created.key }).listApprovals();
  t.deepEqual(approvals.items, []);
});
