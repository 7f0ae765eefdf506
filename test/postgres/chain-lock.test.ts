import test from 'ava';
import { sql } from 'kysely';
import { openContext } from '../../src/context.js';
import { createTestStore } from '../helpers/stores.js';
import { postgresAvailable } from './cluster.js';

if (await postgresAvailable()) {
  test('[postgres] an open append holds its own account\'s chain head only: another instance appends to another account at once, and to the same account after it commits', async (t) => {
    const testStore = await createTestStore('postgres');
    // Two contexts on one database: two instances, each with its own connection pool.
    const first = await openContext(testStore.config);
    const second = await openContext(testStore.config);
    t.teardown(async () => {
      await first.close();
      await second.close();
      await testStore.drop();
    });
    const append = (ctx: typeof first, account: string) => ctx.store.transact((trx) => ctx.ledger.append(trx, { account_id: account, type: 'attempted', actor: null }));
    await append(first, 'acme');
    await append(first, 'globex');

    let release!: () => void;
    const holding = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    const open = first.store.transact(async (trx) => {
      const event = await first.ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: null });
      held();
      await holding;
      return event;
    });
    await isHeld;

    t.is((await append(second, 'globex')).seq, 2, 'another account is not blocked by the open acme append');
    let sameAccountDone = false;
    const sameAccount = append(second, 'acme').then((e) => ((sameAccountDone = true), e));
    // Deterministic, not timed: wait until PostgreSQL itself reports a backend waiting on a lock.
    for (;;) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(first.store.db);
      if (rows[0]!.n > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    t.false(sameAccountDone, 'the second acme append waits on the chain-head row lock');
    release();
    const [a, b] = await Promise.all([open, sameAccount]);
    t.deepEqual([a.seq, b.seq], [2, 3], 'seq stays gapless across instances');
    const rows = await first.store.db.selectFrom('events').select(['seq', 'prev_hash', 'hash']).where('account_id', '=', 'acme').orderBy('seq').execute();
    t.deepEqual(rows.slice(1).map((r) => r.prev_hash), rows.slice(0, -1).map((r) => r.hash), 'each event links to the one before');
  });

  test('[postgres] an append that waited on another instance\'s chain-head lock stamps its event no earlier than the one that instance wrote, whatever its own clock says', async (t) => {
    const testStore = await createTestStore('postgres');
    // The first instance's clock a minute ahead of the second's: only the clamp to the
    // predecessor's ts can keep the second instance's event from going back in time.
    const ahead = { now: () => Date.now() + 60_000 };
    const first = await openContext(testStore.config, { clock: ahead });
    const second = await openContext(testStore.config, { clock: { now: () => Date.now() } });
    t.teardown(async () => {
      await first.close();
      await second.close();
      await testStore.drop();
    });
    const append = (ctx: typeof first) => ctx.store.transact((trx) => ctx.ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: null }));
    await append(first);
    let release!: () => void;
    const holding = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    const open = first.store.transact(async (trx) => {
      const event = await first.ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: null });
      held();
      await holding;
      return event;
    });
    await isHeld;
    // The second instance has no guess for acme: it locks the head, and waits for the first's commit.
    const waiting = append(second);
    for (;;) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(first.store.db);
      if (rows[0]!.n > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    release();
    await Promise.all([open, waiting]);
    const times = (await first.store.db.selectFrom('events').select(['seq', 'ts']).where('account_id', '=', 'acme').orderBy('seq').execute());
    t.deepEqual(times.map((e) => e.seq), [1, 2, 3]);
    t.true(times[2]!.ts >= times[1]!.ts, `seq 3 at ${times[2]!.ts} is before seq 2 at ${times[1]!.ts}`);
  });
}
