import { readConfig } from '../src/config/config.js';
import type { AppContext } from '../src/context.js';
import { storeOptionsOf, UsageError, type StoreArgs } from './output.js';

/**
 * Opens the shared context for one verb and always closes it, creating the ledger (keys
 * aside) when the store has none: for the verbs that may start one (`principals add`).
 * Loaded on demand: the context pulls in Kysely, Koa and the drivers, which verbs like
 * --help and verify never need.
 */
export async function withContext<T>(args: StoreArgs, body: (context: AppContext) => Promise<T>): Promise<T> {
  const { openContext } = await import('../src/context.js');
  const context = await openContext(readConfig(storeOptionsOf(args)));
  try {
    return await body(context);
  } finally {
    await context.close();
  }
}

/**
 * As withContext, for verbs that read or change an existing ledger: where there is none
 * (a mistyped --data-dir next to copied keys, say) it is a usage error, and nothing is created.
 */
export async function withExistingLedger<T>(args: StoreArgs, body: (context: AppContext) => Promise<T>): Promise<T> {
  const { ledgerExists, describeLocation } = await import('../src/store/ledger-presence.js');
  const { store } = readConfig(storeOptionsOf(args));
  if (!(await ledgerExists(store))) {
    throw new UsageError(
      `there is no Gatehouse ledger at ${describeLocation(store)}: check --data-dir, --db or --database-url, ` +
        'or create one with `gatehouse init` (or `gatehouse serve`, which initialises an empty data dir)',
    );
  }
  return withContext(args, body);
}
