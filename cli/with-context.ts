import { readConfig } from '../src/config/config.js';
import type { AppContext } from '../src/context.js';
import { storeOptionsOf, type StoreArgs } from './output.js';

/**
 * Opens the shared context for one verb and always closes it. Loaded on demand: the
 * context pulls in Kysely, Koa and the drivers, which verbs like --help and verify never need.
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
