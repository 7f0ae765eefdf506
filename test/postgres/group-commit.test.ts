import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore } from '../helpers/stores.js';
import { postgresAvailable } from './cluster.js';

// PostgreSQL's group commit (src/store/postgres-group-commit.ts): units that name an account
// share a transaction with the other units of that account queued at the same time. What both
// stores' group commits share (a failing unit, an abandoned one) is in test/store/group-commit.test.ts.

async function freshStore(t: ExecutionContext): Promise<{ store: Store; commits: number[] }> {
  const testStore = await createTestStore('postgres');
  const store = await openStore(testStore.config.store);
  const commits: number[] = [];
  store.onCommit = (units) => commits.push(units);
  t.teardown(async () => {
    await store.close();
    await testStore.drop();
  });
  return { store, commits };
}

const keys = async (store: Store) =>
  (await store.db.selectFrom('meta').select('key').where('key', 'like', 'u%').orderBy('key').execute()).map((row) => row.key);

const name = (i: number) => `u${String(i).padStart(2, '0')}`;

if (await postgresAvailable()) {
  test('[postgres] units of one account queued together share one commit; another account\'s commit on their own', async (t) => {
    const { store, commits } = await freshStore(t);
    const write = (account: string, i: number) => store.transact((trx) => trx.insertInto('meta').values({ key: name(i), value: account }).execute(), { account });
    await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => write('acme', i)),
      ...Array.from({ length: 5 }, (_, i) => write('other', 30 + i)),
    ]);
    t.deepEqual([...commits].sort((a, b) => a - b), [5, 30]);
    t.is((await keys(store)).length, 35);
  });

  test('[postgres] a batch whose connection is terminated mid-way runs again on a new one, and each unit commits exactly once', async (t) => {
    const { store } = await freshStore(t);
    let terminated = false;
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.transact(async (trx) => {
      await trx.insertInto('meta').values({ key: name(i), value: 'x' }).execute();
      if (i === 6 && !terminated) {
        terminated = true;
        await sql`select pg_terminate_backend(pg_backend_pid())`.execute(trx);
      }
    }, { account: 'acme' })));
    t.true(terminated);
    t.deepEqual(await keys(store), Array.from({ length: 10 }, (_, i) => name(i)));
  });

  test('[postgres] batches of two accounts that deadlock both commit: the one PostgreSQL aborts runs again', async (t) => {
    const { store } = await freshStore(t);
    await store.transact((trx) => trx.insertInto('meta').values([{ key: 'a', value: '0' }, { key: 'b', value: '0' }]).execute());
    let bothHoldOne: () => void;
    const barrier = new Promise<void>((r) => (bothHoldOne = r));
    let holding = 0;
    const attempts = { ab: 0, ba: 0 };
    const crossing = (first: string, second: string, which: 'ab' | 'ba', account: string) => store.transact(async (trx) => {
      attempts[which]++;
      await sql`update meta set value = (value::int + 1)::text where key = ${first}`.execute(trx);
      if (attempts[which] === 1 && ++holding === 2) bothHoldOne();
      if (attempts[which] === 1) await barrier;
      await sql`update meta set value = (value::int + 1)::text where key = ${second}`.execute(trx);
      return which;
    }, { account });
    t.deepEqual(await Promise.all([crossing('a', 'b', 'ab', 'x'), crossing('b', 'a', 'ba', 'y')]), ['ab', 'ba']);
    t.is(attempts.ab + attempts.ba, 3, 'exactly one of them ran twice');
    const rows = await store.db.selectFrom('meta').select(['key', 'value']).where('key', 'in', ['a', 'b']).orderBy('key').execute();
    t.deepEqual(rows, [{ key: 'a', value: '2' }, { key: 'b', value: '2' }]);
  });

  test('[postgres] a unit queued on a store that can no longer give a connection is answered with the error, not handed back forever', async (t) => {
    const testStore = await createTestStore('postgres');
    t.teardown(() => testStore.drop());
    const store = await openStore(testStore.config.store);
    await store.close();
    await t.throwsAsync(store.transact((trx) => trx.insertInto('meta').values({ key: 'u00', value: 'x' }).execute(), { account: 'acme' }));
  });

}
