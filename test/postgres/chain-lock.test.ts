import test, { type ExecutionContext } from 'ava';
import type { Clock } from '../../src/core/time.js';
import { sql } from 'kysely';
import { openContext } from '../../src/context.js';
import { createTestStore } from '../helpers/stores.js';
import { postgresAvailable } from './cluster.js';

type Context = Awaited<ReturnType<typeof openContext>>;

/** Two contexts on one fresh database: two instances, each with its own connection pool (and clock, when given). */
async function twoInstances(t: ExecutionContext, clocks: [Clock?, Clock?] = []): Promise<[Context, Context]> {
  const testStore = await createTestStore('postgres');
  const first = await openContext(testStore.config, { clock: clocks[0] });
  const second = await openContext(testStore.config, { clock: clocks[1] });
  t.teardown(async () => {
    await first.close();
    await second.close();
    await testStore.drop();
  });
  return [first, second];
}

function append(ctx: Context, account: string) {
  return ctx.store.transact((trx) => ctx.ledger.append(trx, { account_id: account, type: 'attempted', actor: null }));
}

/** An append to `account` whose transaction stays open, holding the chain head's row lock, until `release`. */
async function heldAppend(ctx: Context, account: string) {
  let release!: () => void;
  const holding = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const open = ctx.store.transact(async (trx) => {
    const event = await ctx.ledger.append(trx, { account_id: account, type: 'attempted', actor: null });
    held();
    await holding;
    return event;
  });
  await isHeld;
  return { open, release };
}

/** Deterministic, not timed: waits until PostgreSQL itself reports a backend waiting on a lock. */
async function untilWaitingOnALock(ctx: Context): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(ctx.store.db);
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

if (await postgresAvailable()) {
  test('[postgres] an open append holds its own account\'s chain head only: another instance appends to another account at once, and to the same account after it commits', async (t) => {
    const [first, second] = await twoInstances(t);
    await append(first, 'acme');
    await append(first, 'globex');
    const { open, release } = await heldAppend(first, 'acme');

    t.is((await append(second, 'globex')).seq, 2, 'another account is not blocked by the open acme append');
    let sameAccountDone = false;
    const sameAccount = append(second, 'acme').then((e) => ((sameAccountDone = true), e));
    await untilWaitingOnALock(first);
    t.false(sameAccountDone, 'the second acme append waits on the chain-head row lock');
    release();
    const [a, b] = await Promise.all([open, sameAccount]);
    t.deepEqual([a.seq, b.seq], [2, 3], 'seq stays gapless across instances');
    const rows = await first.store.db.selectFrom('events').select(['seq', 'prev_hash', 'hash']).where('account_id', '=', 'acme').orderBy('seq').execute();
    t.deepEqual(rows.slice(1).map((r) => r.prev_hash), rows.slice(0, -1).map((r) => r.hash), 'each event links to the one before');
  });

  test('[postgres] an append that waited on another instance\'s chain-head lock stamps its event no earlier than the one that instance wrote, whatever its own clock says', async (t) => {
    // The first instance's clock a minute ahead of the second's: only the clamp to the
    // predecessor's ts can keep the second instance's event from going back in time.
    const [first, second] = await twoInstances(t, [{ now: () => Date.now() + 60_000 }, { now: () => Date.now() }]);
    await append(first, 'acme');
    const { open, release } = await heldAppend(first, 'acme');
    // The second instance has no guess for acme: it locks the head, and waits for the first's commit.
    const waiting = append(second, 'acme');
    await untilWaitingOnALock(first);
    release();
    await Promise.all([open, waiting]);
    const times = (await first.store.db.selectFrom('events').select(['seq', 'ts']).where('account_id', '=', 'acme').orderBy('seq').execute());
    t.deepEqual(times.map((e) => e.seq), [1, 2, 3]);
    t.true(times[2]!.ts >= times[1]!.ts, `seq 3 at ${times[2]!.ts} is before seq 2 at ${times[1]!.ts}`);
  });
}
