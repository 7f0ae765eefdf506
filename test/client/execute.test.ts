import test from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import {
  Executor,
  GatehouseClient,
  GatehouseError,
  GatehouseTransportError,
  GrantVerificationError,
  MemoryKeyStore,
  type WriteFn,
} from '../../src/client/index.js';
import { FakeGatehouse } from './fake-gatehouse.js';

function setup(opts: { pin?: boolean } = {}) {
  const fake = new FakeGatehouse();
  const client = new GatehouseClient({ baseUrl: 'http://gatehouse.test', apiKey: 'gh_test', fetch: fake.fetch });
  const keyStore = new MemoryKeyStore();
  const executor = new Executor({
    client,
    keyStore,
    pinnedKeys: opts.pin === false ? undefined : { [fake.keyId]: fake.publicKeyRaw },
    inProgressWaitMs: 300,
    pollIntervalMs: 20,
  });
  return { fake, client, keyStore, executor };
}

const spec = { method: 'POST', route: '/tickets', command: { title: 'disk full on db-3' } };
const ok201: WriteFn = async () => ({ ok: true, response: { status: 201, body: { id: 't1' } } });

test('created: sent before the write, completed after, with the response', async (t) => {
  const { fake, executor } = setup();
  const order: string[] = [];
  const result = await executor.execute('task-1:create-ticket', spec, async () => {
    order.push(`write after ${fake.reports.map((r) => r.type).join(',')}`);
    return { ok: true, response: { status: 201, body: { id: 't1' } } };
  });
  t.is(result.kind, 'created');
  t.deepEqual(order, ['write after sent']);
  t.deepEqual(fake.reports.map((r) => r.type), ['sent', 'completed']);
  t.like(fake.reports[1]!.body, { outcome: 'succeeded', response: { status: 201, body: { id: 't1' } } });
});

test('the same intent replays instead of writing again; a new intent writes again', async (t) => {
  const { executor } = setup();
  let writes = 0;
  const write: WriteFn = async () => ({ ok: true, response: { status: 201, body: { n: ++writes } } });
  const first = await executor.execute('task-1:create-ticket', spec, write);
  const second = await executor.execute('task-1:create-ticket', spec, write);
  t.is(first.kind, 'created');
  t.is(second.kind, 'replayed');
  if (second.kind === 'replayed') t.deepEqual(second.response, { status: 201, body: { n: 1 } });
  t.is(first.idempotencyKey, second.idempotencyKey);
  const third = await executor.execute('task-1:create-ticket#second-ticket', spec, write);
  t.is(third.kind, 'created');
  t.not(third.idempotencyKey, first.idempotencyKey);
  t.is(writes, 2);
});

test('provider_ref is reported as accepted before completed', async (t) => {
  const { fake, executor } = setup();
  await executor.execute('pay', spec, async () => ({ ok: true, provider_ref: 'pay_123', response: { status: 200 } }));
  t.deepEqual(fake.reports.map((r) => r.type), ['sent', 'accepted', 'completed']);
  t.is(fake.reports[1]!.body.provider_ref, 'pay_123');
});

test('a known business failure is completed as failed and replayed, not re-executed', async (t) => {
  const { fake, executor } = setup();
  let writes = 0;
  const write: WriteFn = async () => {
    writes++;
    return { ok: false, response: { status: 402, body: { error: 'card declined' } } };
  };
  const first = await executor.execute('charge', spec, write);
  t.like(first, { kind: 'created', outcome: 'failed' });
  t.like(fake.reports.at(-1)!.body, { type: 'completed', outcome: 'failed' });
  const again = await executor.execute('charge', spec, write);
  t.like(again, { kind: 'replayed', state: 'failed', response: { status: 402 } });
  t.is(writes, 1);
});

test('a write that throws before sent (by_write mode) is reported canceled', async (t) => {
  const { fake, executor } = setup();
  await t.throwsAsync(
    executor.execute('t', spec, async () => {
      throw new Error('could not build the request');
    }, { sentMode: 'by_write' }),
    { message: 'could not build the request' },
  );
  t.deepEqual(fake.reports.map((r) => r.type), ['canceled']);
  // The write was never made: the same intent (the same key) runs it now, on a new lease.
  const again = await executor.execute('t', spec, ok201);
  t.like(again, { kind: 'created', outcome: 'succeeded', response: { status: 201 } });
  t.deepEqual(fake.reports.map((r) => r.type), ['canceled', 'sent', 'completed']);
});

test('by_write mode: the write reports sent itself', async (t) => {
  const { fake, executor } = setup();
  const r = await executor.execute('t', spec, async (ctx) => {
    t.deepEqual(fake.reports.map((x) => x.type), []);
    await ctx.sent();
    return { ok: true, response: { status: 201 } };
  }, { sentMode: 'by_write' });
  t.is(r.kind, 'created');
  t.deepEqual(fake.reports.map((x) => x.type), ['sent', 'completed']);
});

test('a write that throws after sent is left to become unknown: no completed, no canceled, never re-executed', async (t) => {
  const { fake, executor } = setup();
  let writes = 0;
  const boom = new Error('socket hang up');
  const r = await executor.execute('t', spec, async () => {
    writes++;
    throw boom;
  });
  t.like(r, { kind: 'unknown' });
  if (r.kind === 'unknown') t.is(r.cause, boom);
  t.deepEqual(fake.reports.map((x) => x.type), ['sent']);
  fake.expireLease([...fake.ops.keys()][0]!);
  const again = await executor.execute('t', spec, ok201);
  t.is(again.kind, 'unknown');
  t.is(writes, 1);
});

test('a claim whose answer is lost: asks by key, never mints a new key, and retries with the same key', async (t) => {
  const { fake, executor } = setup();
  fake.drop((m, p) => m === 'POST' && p === '/v1/operations', 'before');
  let writes = 0;
  const r = await executor.execute('t', spec, async () => {
    writes++;
    return { ok: true, response: { status: 201 } };
  });
  t.is(r.kind, 'created');
  t.is(writes, 1);
  const claims = fake.requests.filter((x) => x.method === 'POST' && x.path === '/v1/operations');
  t.is(claims.length, 2);
  t.is(new Set(claims.map((c) => c.key)).size, 1);
  t.true(fake.requests.some((x) => x.path === `/v1/operations?idempotency_key=${encodeURIComponent(r.idempotencyKey)}`));
});

test('a claim that landed but whose answer was lost: the status read shows it leased, no second write', async (t) => {
  const { fake, executor } = setup();
  fake.drop((m, p) => m === 'POST' && p === '/v1/operations', 'after');
  let writes = 0;
  const r = await executor.execute('t', spec, async () => {
    writes++;
    return { ok: true, response: { status: 201 } };
  });
  // Someone (our lost claim) holds the lease: in progress, then unknown once it runs out.
  t.is(r.kind, 'in_progress');
  t.is(writes, 0);
  fake.expireLease([...fake.ops.keys()][0]!);
  t.is((await executor.execute('t', spec, ok201)).kind, 'unknown');
  t.is(writes, 0);
  t.is(fake.byKey.size, 1);
});

test('a lost completed answer: the report is retried with the same data', async (t) => {
  const { fake, executor } = setup();
  fake.drop((m, p, b) => m === 'POST' && p.endsWith('/events') && b?.type === 'completed', 'after');
  const r = await executor.execute('t', spec, ok201);
  t.is(r.kind, 'created');
  t.is([...fake.ops.values()][0]!.state, 'succeeded');
});

test('a completed report refused as too large is reported again with onResponseTooLarge\'s response, same outcome', async (t) => {
  const { fake, executor } = setup();
  fake.maxBodyBytes = 1000;
  const big = { status: 201, headers: { location: '/t/1' }, body: 'x'.repeat(2000) };
  const seen: Array<{ response: unknown; code: string; status: number }> = [];
  const r = await executor.execute('t', spec, async () => ({ ok: true, response: big }), {
    onResponseTooLarge: (response, refusal) => {
      seen.push({ response, code: refusal.code, status: refusal.status });
      return { status: response.status, headers: { ...response.headers, omitted: 'yes' } };
    },
  });
  t.deepEqual(seen, [{ response: big, code: 'payload_too_large', status: 413 }]);
  t.like(r, { kind: 'created', outcome: 'succeeded', response: { status: 201, headers: { location: '/t/1', omitted: 'yes' } } });
  t.deepEqual(fake.reports.map((x) => x.type), ['sent', 'completed']);
  const op = [...fake.ops.values()][0]!;
  t.is(op.state, 'succeeded');
  t.deepEqual(op.response, { status: 201, headers: { location: '/t/1', omitted: 'yes' } });
});

test('a completed report refused as too large, without onResponseTooLarge: left to become unknown, never guessed', async (t) => {
  const { fake, executor } = setup();
  fake.maxBodyBytes = 1000;
  const r = await executor.execute('t', spec, async () => ({ ok: true, response: { status: 201, body: 'x'.repeat(2000) } }));
  t.is(r.kind, 'unknown');
  t.deepEqual(fake.reports.map((x) => x.type), ['sent']);
});

test('no answer at all: throws the transport error after bounded attempts, the key stays stored', async (t) => {
  const { fake, executor, keyStore } = setup();
  fake.drop(() => true, 'before', 1000);
  await t.throwsAsync(executor.execute('t', spec, ok201), { instanceOf: GatehouseTransportError });
  const key = await keyStore.get('t');
  t.truthy(key);
  const claims = fake.requests.filter((x) => x.method === 'POST' && x.path === '/v1/operations');
  t.true(claims.length >= 2);
  t.true(claims.every((c) => c.key === key));
});

test('the same key with a changed payload is a conflict and writes nothing', async (t) => {
  const { executor } = setup();
  await executor.execute('t', spec, ok201);
  let writes = 0;
  const r = await executor.execute('t', { ...spec, command: { title: 'changed' } }, async () => {
    writes++;
    return { ok: true, response: { status: 201 } };
  });
  t.like(r, { kind: 'conflict', code: 'fingerprint_mismatch', state: 'succeeded' });
  t.truthy(r.kind === 'conflict' && r.operationId);
  t.is(writes, 0);
});

test('in_progress: waits (bounded) and returns the replay when the holder finishes', async (t) => {
  const { executor } = setup();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const first = executor.execute('t', spec, async () => {
    await gate;
    return { ok: true, response: { status: 201, body: 'first' } };
  });
  await new Promise((r) => setTimeout(r, 20));
  const second = executor.execute('t', spec, ok201);
  setTimeout(release, 60);
  const [a, b] = await Promise.all([first, second]);
  t.is(a.kind, 'created');
  t.like(b, { kind: 'replayed', response: { body: 'first' } });
});

test('in_progress after the bounded wait when the holder is still busy', async (t) => {
  const { executor } = setup();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const first = executor.execute('t', spec, async () => {
    await gate;
    return { ok: true, response: { status: 201 } };
  });
  await new Promise((r) => setTimeout(r, 20));
  const second = await executor.execute('t', spec, ok201);
  t.is(second.kind, 'in_progress');
  release();
  await first;
});

test('approval: approval_required with the page link; after approval the grant is checked and the write runs once', async (t) => {
  const { fake, executor } = setup();
  fake.approvalRoutes.add('/deploys');
  const deploy = { method: 'POST', route: '/deploys', command: { environment: 'prod' } };
  let writes = 0;
  const write: WriteFn = async (ctx) => {
    writes++;
    t.truthy(ctx.grant);
    return { ok: true, response: { status: 201 } };
  };
  const first = await executor.execute('deploy-1', deploy, write);
  t.like(first, { kind: 'approval_required', approvalId: 'apr_1', approvalUrl: 'http://gatehouse.test/ui/approvals/apr_1' });
  t.is((await executor.execute('deploy-1', deploy, write)).kind, 'approval_required');
  fake.approve('op_1');
  t.is((await executor.execute('deploy-1', deploy, write)).kind, 'created');
  t.is((await executor.execute('deploy-1', deploy, write)).kind, 'replayed');
  t.is(writes, 1);
});

test('approval: approvalWaitMs waits for the decision and then executes', async (t) => {
  const { fake, executor } = setup();
  fake.approvalRoutes.add('/deploys');
  const deploy = { method: 'POST', route: '/deploys', command: { environment: 'prod' } };
  setTimeout(() => fake.approve('op_1'), 80);
  const r = await executor.execute('deploy-1', deploy, ok201, { approvalWaitMs: 2000 });
  t.is(r.kind, 'created');
});

test('a grant signed by a key that is not pinned: no write, the operation is canceled', async (t) => {
  const { fake, executor } = setup();
  fake.approvalRoutes.add('/deploys');
  const deploy = { method: 'POST', route: '/deploys', command: { environment: 'prod' } };
  await executor.execute('d', deploy, ok201);
  fake.approve('op_1');
  // Re-sign the grant with a key the gateway never pinned.
  const op = fake.ops.get('op_1')!;
  const { signature: _s, ...fields } = op.grant!;
  op.grant = fake.signGrant(fields, generateKeyPairSync('ed25519').privateKey);
  let writes = 0;
  await t.throwsAsync(executor.execute('d', deploy, async () => {
    writes++;
    return { ok: true, response: { status: 201 } };
  }), { instanceOf: GrantVerificationError });
  t.is(writes, 0);
  t.deepEqual(fake.reports.map((r) => r.type), ['canceled']);
});

test('a grant for another fingerprint is refused', async (t) => {
  const { fake, executor } = setup();
  fake.approvalRoutes.add('/deploys');
  const deploy = { method: 'POST', route: '/deploys', command: { environment: 'prod' } };
  await executor.execute('d', deploy, ok201);
  fake.approve('op_1');
  const op = fake.ops.get('op_1')!;
  const { signature: _s, ...fields } = op.grant!;
  op.grant = fake.signGrant({ ...fields, fingerprint: 'f'.repeat(64) });
  await t.throwsAsync(executor.execute('d', deploy, ok201), { instanceOf: GrantVerificationError, message: /fingerprint/ });
});

test('without pinned keys an approved operation is never executed', async (t) => {
  const { fake, executor } = setup({ pin: false });
  fake.approvalRoutes.add('/deploys');
  const deploy = { method: 'POST', route: '/deploys', command: { environment: 'prod' } };
  await executor.execute('d', deploy, ok201);
  fake.approve('op_1');
  await t.throwsAsync(executor.execute('d', deploy, ok201), { instanceOf: GrantVerificationError });
});

test('denied is a value', async (t) => {
  const { fake, executor } = setup();
  fake.approvalRoutes.add('/deploys');
  const deploy = { method: 'POST', route: '/deploys', command: { environment: 'prod' } };
  await executor.execute('d', deploy, ok201);
  fake.ops.get('op_1')!.state = 'denied';
  t.is((await executor.execute('d', deploy, ok201)).kind, 'denied');
});

test('error answers become GatehouseError with code, status and extra fields', async (t) => {
  const client = new GatehouseClient({
    baseUrl: 'http://x',
    fetch: async () =>
      new Response(JSON.stringify({ error: { code: 'scope_busy', message: 'busy', operation_id: 'op_9' } }), {
        status: 409,
        headers: { 'content-type': 'application/json' },
      }),
  });
  const e = await t.throwsAsync(client.claim('k', spec), { instanceOf: GatehouseError });
  t.is(e!.code, 'scope_busy');
  t.is(e!.status, 409);
  t.deepEqual(e!.extra, { operation_id: 'op_9' });
  const ex = new Executor({ client, keyStore: new MemoryKeyStore() });
  t.like(await ex.execute('i', spec, ok201), { kind: 'conflict', code: 'scope_busy', operationId: 'op_9' });
});

test('outcome bodies with 4xx statuses are values, with Retry-After', async (t) => {
  const client = new GatehouseClient({
    baseUrl: 'http://x',
    fetch: async () =>
      new Response(JSON.stringify({ outcome: 'in_progress', execute: false, operation: { id: 'op_1' } }), {
        status: 409,
        headers: { 'content-type': 'application/json', 'retry-after': '3' },
      }),
  });
  const r = await client.claim('k', spec);
  t.like(r, { outcome: 'in_progress', status: 409, retryAfterSeconds: 3 });
});

test('the per-request timeout becomes a transport error of kind timeout', async (t) => {
  const client = new GatehouseClient({
    baseUrl: 'http://x',
    timeoutMs: 30,
    fetch: (_i, init) =>
      new Promise((_resolve, reject) => {
        init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason));
      }),
  });
  const e = await t.throwsAsync(client.getOperation('op_1'), { instanceOf: GatehouseTransportError });
  t.is(e!.kind, 'timeout');
});

test('heartbeats every lease_seconds/3 while the write runs, and stops after', async (t) => {
  const { fake, executor } = setup();
  await executor.execute('hb', { ...spec, lease_seconds: 1 }, async () => {
    await new Promise((r) => setTimeout(r, 2000));
    return { ok: true, response: { status: 201 } };
  });
  // Every ~333 ms over 2 s is 6; timers run late on a loaded machine, so at least 2, never more than 7.
  const beats = fake.reports.filter((r) => r.type === 'heartbeat').length;
  t.true(beats >= 2 && beats <= 7, `${beats} heartbeats`);
  await new Promise((r) => setTimeout(r, 500));
  t.is(fake.reports.filter((r) => r.type === 'heartbeat').length, beats);
});

test('a lost lease aborts the write\'s signal; its completion is then unknown, not guessed', async (t) => {
  const { fake, executor } = setup();
  const r = await executor.execute('lost-lease', { ...spec, lease_seconds: 1 }, async (ctx) => {
    fake.expireLease(ctx.operation.id);
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    return { ok: true, response: { status: 201 } };
  });
  t.is(r.kind, 'unknown');
  t.false(fake.reports.some((x) => x.type === 'completed'));
});
