import { isSqliteOutage } from './store.js';
import { isConnectionLoss, isTimeout } from './postgres-errors.js';

/**
 * An error of either store saying it cannot be reached or stopped answering: the caller may
 * retry later (503 store_unavailable), nothing is wrong with the request or the code. Units of
 * work turn these into StoreUnavailableError themselves; reads and the key lookup run outside
 * one and meet the driver's own errors (a PostgreSQL connection terminated mid-query, a query
 * read timeout), which must not become 500 internal with a stack per request.
 */
export function isStoreOutage(error: unknown): boolean {
  return isSqliteOutage(error) || isConnectionLoss(error) || isTimeout(error);
}
