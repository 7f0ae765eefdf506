import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from '../../schema/database.js';

export type Db = Kysely<Database>;
export type Dialect = 'sqlite' | 'postgres';
export type CommitObserver = (units: number, seconds: number) => void;

/**
 * The one door to the database. Reads may use `db`; every write goes through
 * `transact`, and code inside a unit must use the `trx` it is given (on SQLite
 * the unit holds the only connection, so touching `db` there would wait forever).
 */
export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  transact<T>(unit: (trx: Db) => Promise<T>): Promise<T>;
  /** `SELECT … FOR UPDATE` where the dialect has row locks; SQLite's writer lock already serialises. */
  forUpdate<QB extends SelectQueryBuilder<any, any, any>>(query: QB): QB;
  /** Told after each COMMIT how many units it carried and how long it took (for /metrics). */
  onCommit: CommitObserver | null;
  close(): Promise<void>;
}

/**
 * The database cannot be reached, or stopped answering, or a commit's fate is unknown because the
 * connection died during it. The caller may retry later (with the same idempotency key).
 */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the store is unreachable; retry later with the same idempotency key', { cause });
    this.name = 'StoreUnavailableError';
  }
}
