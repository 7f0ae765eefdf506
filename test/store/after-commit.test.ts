import test from 'ava';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestStore, storeKinds, type StoreKind } from '../helpers/stores.js';

async function freshStore(t: { teardown(fn: () => Promise<void>): void }, kind: StoreKind): Promise<Store> {
  const testStore = await createTestStore(kind);
  const store = await openStore(testStore.config.store);
  t.teardown(async () => {
    await store.close();
    await testStore.drop();
  });
  return store;
}

const metaValue = async (store: Store, key: string) =>
  (await store.db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst())?.value;

for (const kind of await storeKinds()) {
  test(`[${kind}] after-commit work runs once the unit committed, and sees what it wrote`, async (t) => {
    const store = await freshStore(t, kind);
    const seen: Array<string | undefined> = [];
    let ran!: Promise<void>;
    await store.transact(async (trx, work) => {
      await trx.insertInto('meta').values({ key: 'k1', value: 'written' }).execute();
      work.afterCommit(() => {
        // Read outside the transaction: only a committed row is visible here.
        ran = metaValue(store, 'k1').then((value) => void seen.push(value));
      });
      t.is(seen.length, 0);
    });
    await ran;
    t.deepEqual(seen, ['written']);
  });

  test(`[${kind}] after-commit work of a unit that rolls back never runs, while the other units of its batch still run theirs`, async (t) => {
    const store = await freshStore(t, kind);
    const ran: string[] = [];
    // Started together: on SQLite they share one group commit, each unit in its own savepoint.
    const results = await Promise.allSettled(['a', 'b', 'c'].map((name) => store.transact(async (trx, work) => {
      await trx.insertInto('meta').values({ key: name, value: name }).execute();
      work.afterCommit(() => ran.push(name));
      if (name === 'b') throw new Error('b rolls back');
    })));
    t.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    t.deepEqual(ran.sort(), ['a', 'c']);
    t.is(await metaValue(store, 'b'), undefined);
  });
}

if ((await storeKinds()).includes('postgres')) test('[postgres] an attempt retried after a serialization failure runs its after-commit work once, for the attempt that committed', async (t) => {
  const store = await freshStore(t, 'postgres');
  let attempts = 0;
  let ran = 0;
  await store.transact(async (_trx, work) => {
    attempts++;
    work.afterCommit(() => ran++);
    if (attempts === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
  });
  t.is(attempts, 2);
  t.is(ran, 1);
});
