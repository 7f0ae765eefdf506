import test from 'ava';
import { startPeriodicTask } from '../../src/core/periodic-task.js';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until `done()` (checked every 10 ms), for at most 10 s: what the tests count must have
 * happened, however slowly a loaded machine runs the timers (a fixed 100 ms sleep was not enough
 * in a CI run with every other test file working at once).
 */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done() && Date.now() < deadline) await sleep(10);
}

const kinds = await storeKinds();

test('a periodic pass slower than its interval is never run twice at once, and stop waits for it', async (t) => {
  let running = 0;
  let most = 0;
  let finished = 0;
  const task = startPeriodicTask(async () => {
    most = Math.max(most, ++running);
    await sleep(60);
    running--;
    finished++;
  }, (error) => t.fail(String(error)), 10);
  await until(() => finished >= 2 && running === 1);
  await task.stop();
  t.is(most, 1, 'one pass at a time');
  t.true(finished >= 2, `${finished} passes ran`);
  t.is(running, 0, 'stop returned after the pass in flight ended');
});

test('a periodic pass that fails goes to onError and the next tick still runs', async (t) => {
  let calls = 0;
  const errors: unknown[] = [];
  const task = startPeriodicTask(async () => {
    if (++calls === 1) throw new Error('first pass fails');
  }, (error) => errors.push(error), 10);
  await until(() => calls >= 2);
  await task.stop();
  t.is(errors.length, 1);
  t.true(calls >= 2, `${calls} passes`);
});

for (const kind of kinds) {
  test(`[${kind}] the checkpoint timer signs a checkpoint for a chain that grew, with no request asking`, async (t) => {
    const app = await startTestApp(t, kind);
    const { ledger, store } = app.context;
    for (let i = 0; i < 3; i++) {
      await store.transact((trx) => ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: null, payload: { i } }));
    }
    const before = await ledger.latestCheckpoint('acme');
    t.true(before === undefined || before.tree_size < 3, 'nothing checkpointed the three events yet');
    const errors: unknown[] = [];
    const timer = ledger.startCheckpointTimer((error) => errors.push(error), 20);
    t.teardown(() => timer.stop());
    const deadline = Date.now() + 10_000;
    while ((await ledger.latestCheckpoint('acme'))?.tree_size !== 3) {
      if (Date.now() > deadline) return t.fail('the timer never checkpointed the grown chain');
      await sleep(20);
    }
    await sleep(100);
    await timer.stop();
    const sizes = await store.db.selectFrom('checkpoints').select('tree_size').where('account_id', '=', 'acme').where('tree_size', '=', 3).execute();
    t.is(sizes.length, 1, 'one checkpoint for the size, however many ticks saw it');
    t.deepEqual(errors, []);
  });
}
