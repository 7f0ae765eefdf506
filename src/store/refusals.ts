import type { Db, Store, TransactOptions, UnitOfWork } from './store.js';

/**
 * A refusal decided inside a transaction whose records must still commit (a `conflicted` or
 * `lease_expired` event, an approval's expiry): the unit returns it, and it is thrown once the
 * transaction has committed. Throwing inside the unit would roll those records back.
 */
export interface Refusal {
  refusal: Error;
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && 'refusal' in value && (value as Refusal).refusal instanceof Error;
}

/** `store.transact`, then throws the refusal the unit returned, if any, after the commit. */
export async function transactOrRefuse<T>(
  store: Store, unit: (trx: Db, work: UnitOfWork) => Promise<T | Refusal>, options?: TransactOptions,
): Promise<Exclude<T, Refusal>> {
  const result = await store.transact(unit, options);
  if (isRefusal(result)) throw result.refusal;
  return result as Exclude<T, Refusal>;
}
