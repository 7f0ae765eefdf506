import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { movableClock, ticketClaim } from '../operations/claims.js';
import type { Principal } from '../../src/principals/roles.js';

const BURST = 3000;
/** The contract's promise: a lease that ran out is `unknown` within 5 s. Measured from the moment the clock passed every lease. */
const PROMISE_MS = 5000;

/** `count` claims with 60-s leases, made through the domain (setting up, not what is measured), 32 at a time. */
async function claimMany(app: TestApp, principal: Principal, prefix: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < count) {
      const i = next++;
      const answer = await app.context.operations.claim(principal, `${prefix}-${i}`, ticketClaim(`${prefix} ${i}`, { lease_seconds: 60 }) as never);
      if (answer.outcome !== 'created') throw new Error(`claim ${i}: ${answer.outcome}`);
    }
  }));
}

async function stillLeased(app: TestApp, account: string, nowMs: number): Promise<number> {
  const row = await app.context.store.db.selectFrom('operations').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', account).where('state', 'in', ['running', 'sent', 'accepted']).where('lease_expires_at', '<=', nowMs)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every page of `?state=unknown`, following next_cursor until it is null. */
async function listUnknown(app: TestApp, key: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await app.request('GET', `/v1/operations?state=unknown&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { key });
    if (res.status !== 200) throw new Error(`list answered ${res.status}: ${res.text}`);
    ids.push(...res.body.items.map((o: { id: string; state: string }) => o.id));
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return ids;
}

for (const kind of await storeKinds()) {
  test(`[${kind}] ${BURST} leases that run out together are all unknown within 5 s, and ?state=unknown pages through every one`, async (t) => {
    t.timeout(180_000);
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const key = await app.keyFor('acme', 'gateway');
    const principal = (await app.context.principals.authenticate(key))!;
    await claimMany(app, principal, 'burst', BURST);

    clock.advance(61_000);
    const passedAt = Date.now();
    // Only the background sweeper works here: no read of the operations list runs until it is done.
    while ((await stillLeased(app, 'acme', clock.now())) > 0 && Date.now() - passedAt < 30_000) await new Promise((r) => setTimeout(r, 100));
    const settledMs = Date.now() - passedAt;
    t.log(`${kind}: ${BURST} expired leases settled by the background sweeper in ${settledMs} ms`);
    t.true(settledMs < PROMISE_MS, `settled in ${settledMs} ms`);

    const listed = await listUnknown(app, key, 1000);
    t.is(listed.length, BURST);
    t.is(new Set(listed).size, BURST, 'no operation listed twice');
    const lapses = await app.context.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', 'acme').where('type', '=', 'lease_expired').executeTakeFirstOrThrow();
    t.is(Number(lapses.n), BURST, 'exactly one lease_expired event per operation');
  });

  test(`[${kind}] a list read racing the background sweeper is complete when its next_cursor is null`, async (t) => {
    t.timeout(120_000);
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const key = await app.keyFor('acme', 'gateway');
    const principal = (await app.context.principals.authenticate(key))!;
    await claimMany(app, principal, 'race', 600);
    clock.advance(61_000);
    // The read's own sweep and the background one take the same rows at the same time.
    const listed = await listUnknown(app, key, 250);
    t.is(new Set(listed).size, 600);
  });
}
