import { readConfig } from '../src/config/config.js';
import { openContext, type AppContext } from '../src/context.js';
import { storeOptionsOf, type StoreArgs } from './output.js';

/** Opens the shared context for one verb and always closes it. */
export async function withContext<T>(args: StoreArgs, body: (context: AppContext) => Promise<T>): Promise<T> {
  const context = await openContext(readConfig(storeOptionsOf(args)));
  try {
    return await body(context);
  } finally {
    await context.close();
  }
}
