import test, { type ExecutionContext } from 'ava';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { WorkAbandonedError, WorkScope } from '../../src/store/work-scope.js';
import { createTestStore, storeKinds, type StoreKind } from '../helpers/stores.js';

// Both stores' group commits (src/store/sqlite-store.ts, src/store/postgres-group-commit.ts) run a
// batch's units without savepoints: a unit that fails rolls the batch back, and the others run
// again in a guarded batch (each unit in a savepoint).

async function freshStore(t: ExecutionContext, kind: StoreKind): Promise<{ store: Store }> {
  const testStore = await createTestStore(kind);
  const store = await openStore(testStore.config.store);
  t.teardown(async () => {
    await store.close();
    await testStore.drop();
  });
  return { store };
}

const keys = async (store: Store) =>
  (await store.db.selectFrom('meta').select('key').where('key', 'like', 'u%').orderBy('key').execute()).map((row) => row.key);

const name = (i: number) => `u${String(i).padStart(2, '0')}`;

for (const kind of await storeKinds()) {
  test(`[${kind}] a unit that throws gets its error and leaves nothing; the others of its batch commit once and run their after-commit work once`, async (t) => {
    const { store } = await freshStore(t, kind);
    const runs = new Map<number, number>();
    const afterCommits: number[] = [];
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.transact(async (trx, work) => {
      runs.set(i, (runs.get(i) ?? 0) + 1);
      await trx.insertInto('meta').values({ key: name(i), value: 'x' }).execute();
      work.afterCommit(() => afterCommits.push(i));
      // The first throw breaks the batch (no savepoints); the second comes in the guarded rerun.
      if (i === 4 || i === 7) throw new Error(`unit ${i} fails`);
      return i;
    }, { account: 'acme' })));
    t.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    t.regex(String((results[4] as PromiseRejectedResult).reason), /unit 4 fails/);
    t.deepEqual(await keys(store), [0, 1, 2, 3, 5, 6, 8, 9].map(name));
    t.deepEqual(afterCommits.sort((a, b) => a - b), [0, 1, 2, 3, 5, 6, 8, 9]);
    t.true([...runs.values()].every((count) => count <= 2), 'no unit runs more than twice');
    t.is(runs.get(4), 1);
    t.is(runs.get(7), 1);
  });

  test(`[${kind}] a unit whose request is abandoned mid-batch is rolled back and says so; the others commit`, async (t) => {
    const { store } = await freshStore(t, kind);
    const scope = new WorkScope();
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => store.transact(async (trx) => {
      await trx.insertInto('meta').values({ key: name(i), value: 'x' }).execute();
      if (i === 2) t.false(scope.abandon('client_gone').mayHaveWritten, 'not committing yet');
    }, { account: 'acme', scope: i === 2 ? scope : undefined })));
    t.true((results[2] as PromiseRejectedResult).reason instanceof WorkAbandonedError);
    t.deepEqual(results.filter((r) => r.status === 'fulfilled').length, 5);
    t.deepEqual(await keys(store), [0, 1, 3, 4, 5].map(name));
  });
}

// A SQLite batch holds the event loop while it runs and its COMMIT fsyncs, so the store asks, before each batch, whether
// connections are arriving (Store.arrivals), and gives the loop turns to take them in first.
// Serial: alone on the event loop. Another test's batch blocking the loop past the store's stall
// threshold would make this one's units wait an extra turn, as after any stall (sqlite-store.ts).
test.serial('[sqlite] a batch waits while work is arriving, and carries what arrived', async (t) => {
  const { store } = await freshStore(t, 'sqlite');
  const late: Array<Promise<unknown>> = [];
  const batches: Array<{ units: number; arrivedBefore: number }> = [];
  store.onCommit = (units) => batches.push({ units, arrivedBefore: late.length });
  store.arrivals = () => {
    const i = late.length;
    if (i === 5) return false;
    late.push(store.transact(async (trx) => trx.insertInto('meta').values({ key: name(i), value: 'late' }).execute()));
    return true;
  };
  await store.transact(async (trx) => trx.insertInto('meta').values({ key: 'u-first', value: 'x' }).execute());
  await Promise.all(late);
  // All five unless this file's other tests, sharing the event loop, held it past ARRIVAL_HOLD_MS.
  t.true(batches[0]!.arrivedBefore >= 1, 'it waited for what was arriving');
  t.is(batches[0]!.units, 1 + batches[0]!.arrivedBefore, 'the first unit and every one that arrived while it waited: one COMMIT');
  t.is(batches.reduce((sum, batch) => sum + batch.units, 0), 1 + late.length);
  t.deepEqual(await keys(store), ['u-first', ...late.map((_, i) => name(i))]);
});

test('[sqlite] a batch is not held for ever when work never stops arriving', async (t) => {
  const { store } = await freshStore(t, 'sqlite');
  let asked = 0;
  store.arrivals = () => {
    asked++;
    return true;
  };
  const began = performance.now();
  await store.transact(async (trx) => trx.insertInto('meta').values({ key: 'u-first', value: 'x' }).execute());
  t.true(asked > 1, 'it did wait');
  // The hold is ARRIVAL_HOLD_MS (10 ms); a generous bound, so a loaded machine does not fail it.
  t.true(performance.now() - began < 2_000, `committed after ${Math.round(performance.now() - began)} ms`);
  t.deepEqual(await keys(store), ['u-first']);
});
