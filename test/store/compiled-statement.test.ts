import test from 'ava';
import { compiledOnce, affectedRows } from '../../src/store/compiled-statement.js';
import { openStore } from '../../src/store/open-store.js';
import { InvariantError } from '../../src/core/errors.js';
import { createTestStore, storeKinds } from '../helpers/stores.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] a statement compiled once binds each call's own values, and a wrong parameter list fails on first use`, async (t) => {
    const testStore = await createTestStore(kind);
    const store = await openStore(testStore.config.store);
    t.teardown(async () => {
      await store.close();
      await testStore.drop();
    });
    const insert = compiledOnce(
      (db, row: { key: string; value: string }) => db.insertInto('meta').values(row).onConflict((oc) => oc.column('key').doNothing()),
      (row) => [row.key, row.value],
    );
    const results = await store.transact(async (trx) => [
      affectedRows(await insert(trx, { key: 'a', value: '1' })),
      affectedRows(await insert(trx, { key: 'b', value: '2' })), // the cached text, new values
      affectedRows(await insert(trx, { key: 'a', value: '3' })), // taken: nothing inserted
    ]);
    t.deepEqual(results, [1, 1, 0]);
    const rows = await store.db.selectFrom('meta').select(['key', 'value']).where('key', 'in', ['a', 'b']).orderBy('key').execute();
    t.deepEqual(rows, [{ key: 'a', value: '1' }, { key: 'b', value: '2' }]);

    const swapped = compiledOnce(
      (db, row: { key: string; value: string }) => db.insertInto('meta').values(row),
      (row) => [row.value, row.key],
    );
    await t.throwsAsync(store.transact((trx) => swapped(trx, { key: 'c', value: '4' })), { instanceOf: InvariantError });
    t.is(await store.db.selectFrom('meta').select('key').where('key', '=', 'c').executeTakeFirst(), undefined, 'nothing was written by the refused statement');
  });

  test(`[${kind}] a compiled statement the database refuses rejects its promise, inside a batch as outside`, async (t) => {
    const testStore = await createTestStore(kind);
    const store = await openStore(testStore.config.store);
    t.teardown(async () => {
      await store.close();
      await testStore.drop();
    });
    const insert = compiledOnce((db, row: { key: string; value: string }) => db.insertInto('meta').values(row), (row) => [row.key, row.value]);
    await store.transact((trx) => insert(trx, { key: 'a', value: '1' }));
    // The second call runs the text compiled by the first (on SQLite straight on its prepared statement): a taken key.
    const outcome = await store.transact(async (trx) => {
      const pending = insert(trx, { key: 'a', value: '2' });
      t.true(pending instanceof Promise, 'the call itself does not throw');
      return pending.then(() => 'inserted', () => 'refused');
    });
    t.is(outcome, 'refused');
    t.deepEqual(await store.db.selectFrom('meta').select('value').where('key', '=', 'a').execute(), [{ value: '1' }]);
  });
}
