import type { Store } from './store.js';

/**
 * Health is honest: the probe writes, so a database that can no longer take writes (disk full,
 * read-only, lost connection, locked by another process) fails it instead of looking green.
 */
export async function probeWritable(store: Store, now: string): Promise<void> {
  await store.transact((trx) =>
    trx.insertInto('meta').values({ key: 'health_probe', value: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: now })).execute(),
  );
}
