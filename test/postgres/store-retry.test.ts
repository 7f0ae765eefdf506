import test from 'ava';
import { sql } from 'kysely';
import { openStore } from '../../src/store/open-store.js';
import { IDLE_IN_TRANSACTION_MS, STATEMENT_TIMEOUT_MS } from '../../src/store/postgres-store.js';
import { createTestStore } from '../helpers/stores.js';
import { postgresAvailable } from './cluster.js';

if (await postgresAvailable()) {
  test('[postgres] two transactions that deadlock both commit: the store retries the one PostgreSQL aborts', async (t) => {
    const testStore = await createTestStore('postgres');
    const store = await openStore(testStore.config.store);
    t.teardown(async () => {
      await store.close();
      await testStore.drop();
    });
    await store.transact((trx) => trx.insertInto('meta').values([{ key: 'a', value: '0' }, { key: 'b', value: '0' }]).execute());

    // Each holds one row and then wants the other's: PostgreSQL aborts one with 40P01.
    let bothHoldOne: () => void;
    const barrier = new Promise<void>((r) => (bothHoldOne = r));
    let holding = 0;
    const attempts = { ab: 0, ba: 0 };
    const crossing = (first: string, second: string, name: 'ab' | 'ba') => store.transact(async (trx) => {
      attempts[name]++;
      await sql`update meta set value = (value::int + 1)::text where key = ${first}`.execute(trx);
      if (attempts[name] === 1 && ++holding === 2) bothHoldOne();
      if (attempts[name] === 1) await barrier;
      await sql`update meta set value = (value::int + 1)::text where key = ${second}`.execute(trx);
      return name;
    });
    t.deepEqual(await Promise.all([crossing('a', 'b', 'ab'), crossing('b', 'a', 'ba')]), ['ab', 'ba']);
    t.is(attempts.ab + attempts.ba, 3, 'exactly one of them ran twice');
    const rows = await store.db.selectFrom('meta').select(['key', 'value']).where('key', 'in', ['a', 'b']).orderBy('key').execute();
    t.deepEqual(rows, [{ key: 'a', value: '2' }, { key: 'b', value: '2' }], 'each update counted once: the aborted attempt left nothing');
  });

  test('[postgres] an error that is not a serialization failure or deadlock is not retried', async (t) => {
    const testStore = await createTestStore('postgres');
    const store = await openStore(testStore.config.store);
    t.teardown(async () => {
      await store.close();
      await testStore.drop();
    });
    let attempts = 0;
    await t.throwsAsync(store.transact(async (trx) => {
      attempts++;
      await trx.insertInto('meta').values([{ key: 'x', value: '1' }, { key: 'x', value: '2' }]).execute();
    }), { message: /duplicate key/ });
    t.is(attempts, 1);
  });
}

if (await postgresAvailable()) {
  test('[postgres] the server ends a transaction left idle by a vanished instance, so no account\'s chain head stays locked for hours', async (t) => {
    const testStore = await createTestStore('postgres');
    const store = await openStore(testStore.config.store);
    t.teardown(async () => {
      await store.close();
      await testStore.drop();
    });
    const { rows } = await sql<{ timeout: string }>`select current_setting('idle_in_transaction_session_timeout') as timeout`.execute(store.db);
    t.is(rows[0]!.timeout, `${IDLE_IN_TRANSACTION_MS / 1000}s`);
  });

  test('[postgres] a row lock held by an instance gone silent mid-transaction is freed before another instance\'s statement times out', async (t) => {
    const testStore = await createTestStore('postgres');
    const silent = await openStore(testStore.config.store);
    const other = await openStore(testStore.config.store);
    t.teardown(async () => {
      await silent.close();
      await other.close();
      await testStore.drop();
    });
    await other.transact((trx) => trx.insertInto('meta').values({ key: 'head', value: '0' }).execute());
    // The silent instance: it takes the row, then sends nothing more, as one cut off from the server would.
    let locked: () => void;
    const holding = new Promise<void>((r) => (locked = r));
    const silentUnit = silent.db.transaction().execute(async (trx) => {
      await sql`update meta set value = 'silent' where key = 'head'`.execute(trx);
      locked();
      await new Promise((r) => setTimeout(r, IDLE_IN_TRANSACTION_MS + 4_000));
      await sql`select 1`.execute(trx);
    });
    const ended = t.throwsAsync(silentUnit);
    await holding;
    const started = Date.now();
    await other.transact((trx) => trx.updateTable('meta').set({ value: 'other' }).where('key', '=', 'head').execute());
    const waited = Date.now() - started;
    t.true(waited < STATEMENT_TIMEOUT_MS, `the other instance waited ${waited} ms for the row: past its statement timeout it would have answered store_unavailable`);
    t.true(waited >= IDLE_IN_TRANSACTION_MS - 500, `it waited ${waited} ms: the lock was held until the server ended the idle transaction`);
    await ended;
    const row = await other.db.selectFrom('meta').select('value').where('key', '=', 'head').executeTakeFirstOrThrow();
    t.is(row.value, 'other', 'the silent transaction was rolled back');
  });
}
