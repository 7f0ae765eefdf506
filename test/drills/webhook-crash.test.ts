// A real `gatehouse serve` killed with SIGKILL after an approval request committed and before its
// webhook was delivered (the receiver was down): after a restart the delivery arrives once the
// receiver answers, signed as always.
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { connectStore } from '../../src/store/open-store.js';
import { createTestStore, storeKinds } from '../helpers/stores.js';
import { addPrincipalWith, freePort, spawnGatehouse } from '../helpers/server-process.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const SECRET = 'whsec_crash_drill';

async function eventually<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const kind of await storeKinds()) {
  test.serial(`[${kind}] kill -9 between the commit and the delivery: after a restart the webhook arrives once the receiver answers`, async (t) => {
    const testStore = await createTestStore(kind);
    t.teardown(() => testStore.drop());
    const port = await freePort();
    const policies = path.join(testStore.dataDir, 'policies.json');
    fs.writeFileSync(policies, JSON.stringify({
      policies: [{ method: 'POST', route: '/payments', approval: { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 3600 } }],
      webhook: { url: `http://127.0.0.1:${port}/hook`, secret: SECRET },
    }));
    const args = [...testStore.cliArgs, '--config', policies];
    const first = await spawnGatehouse({ args, name: 'gatehouse serve (to be killed)' });
    t.teardown(() => first.kill9());
    const gateway = await addPrincipalWith(testStore.cliArgs, 'acme', ['gateway']);

    const claim = await fetch(`${first.url}/v1/operations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway}`, 'idempotency-key': 'crash-webhook-1', 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'POST', route: '/payments', command: { amount: 4200 }, summary: { target: 'Supplier', operation: 'Pay', consequence: 'Sends 42 EUR', reversible: false } }),
    });
    t.is(claim.status, 202);
    const approvalId = ((await claim.json()) as { approval: { id: string } }).approval.id;

    // Committed, tried against the receiver that is down, and waiting for its next try: now the process dies.
    const store = connectStore(testStore.config.store);
    t.teardown(() => store.close());
    const outboxRow = () => store.db.selectFrom('webhook_outbox').selectAll().where('approval_id', '=', approvalId).executeTakeFirst();
    await eventually(async () => {
      const row = await outboxRow();
      return row !== undefined && Number(row.attempts) >= 1 && row.claimed_until === null;
    }, 30_000, 'a failed first try recorded in the outbox');
    await first.kill9();

    const hook = await startReceiver(port);
    t.teardown(() => hook.close());
    const second = await spawnGatehouse({ args, name: 'gatehouse serve (restarted)' });
    t.teardown(() => second.stop());
    await hook.until(1);
    const [delivered] = hook.received;
    const body = JSON.parse(delivered!.body);
    t.like(body, { type: 'approval_requested', approval_id: approvalId, account_id: 'acme' });
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(delivered!.headers['gatehouse-signature']));
    t.truthy(match);
    t.is(match![2], crypto.createHmac('sha256', SECRET).update(`${match![1]}.${delivered!.body}`).digest('hex'));
    // Delivered: the row leaves the outbox.
    await eventually(async () => (await outboxRow()) === undefined, 30_000, 'the delivered row deleted');
    t.true(hook.received.every((r) => JSON.parse(r.body).approval_id === approvalId));
  });
}
