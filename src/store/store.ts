import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from '../../schema/database.js';
import type { WorkScope } from './work-scope.js';

export type Db = Kysely<Database>;
export type Dialect = 'sqlite' | 'postgres';
export type CommitObserver = (units: number, seconds: number) => void;

/**
 * Whether new work has been arriving since the store last asked: the HTTP server accepted a
 * connection (src/http/connection-arrivals.ts). Asking resets it.
 */
export type ArrivalSignal = () => boolean;

export interface TransactOptions {
  /**
   * The account the unit works in (its chain, its operations). Units of one account may then
   * share a transaction and its commit with each other, never with another account's: PostgreSQL's
   * group commit (postgres-group-commit.ts). SQLite batches every unit anyway; without it a
   * PostgreSQL unit has a transaction of its own.
   */
  account?: string;
  /**
   * The request the unit works for (http/deadline.ts): once it is abandoned, a unit that has not
   * started is not run and one that has not reached COMMIT rolls back. Background work has none.
   */
  scope?: WorkScope;
}

/**
 * The one door to the database. Reads may use `db`; every write goes through
 * `transact`, and code inside a unit must use the `trx` it is given (on SQLite
 * the unit holds the only connection, so touching `db` there would wait forever).
 */
export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** Runs `unit` in a transaction; `work.afterCommit` registers what runs once it has committed. */
  transact<T>(unit: (trx: Db, work: UnitOfWork) => Promise<T>, options?: TransactOptions): Promise<T>;
  /**
   * `SELECT … FOR UPDATE` where the dialect has row locks; SQLite's writer lock already serialises.
   * `skipLocked`: rows another transaction holds are passed over (work queues shared by instances).
   */
  forUpdate<QB extends SelectQueryBuilder<any, any, any>>(query: QB, options?: { skipLocked?: boolean }): QB;
  /** Told after each COMMIT how many units it carried and how long it took (for /metrics). */
  onCommit: CommitObserver | null;
  /**
   * Asked before each batch by a store whose COMMIT holds the event loop (SQLite's fsync): while
   * it answers true, the loop gets short turns first, to take in what is arriving. A store whose
   * commits do not hold the loop (PostgreSQL) never asks.
   */
  arrivals: ArrivalSignal | null;
  /**
   * Run first in every transaction that carries units of one account (PostgreSQL's group commit),
   * before any unit: the ledger takes the account's chain-head lock there, so every transaction of
   * an account takes its locks in one order (ledger.ts holdChainHead). A store with one writer at
   * a time (SQLite) never calls it.
   */
  beforeAccountBatch: ((trx: Db, accountId: string) => Promise<void>) | null;
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

/** What a unit of work may ask of its transaction besides SQL. */
export interface UnitOfWork {
  /**
   * Runs `callback` once this unit's transaction has committed, and never if it rolls back (nor for
   * an attempt that was retried). For work outside the database that must not see uncommitted
   * state, e.g. waking a delivery loop. A callback that throws is reported, not rethrown: the
   * commit has happened and its caller gets its answer.
   */
  afterCommit(callback: () => void): void;
}

/** Collects one unit's after-commit callbacks; the store runs them once its COMMIT has returned. */
export class AfterCommit implements UnitOfWork {
  private callbacks: Array<() => void> | null = null;

  afterCommit(callback: () => void): void {
    (this.callbacks ??= []).push(callback);
  }

  /** Called by the store after COMMIT returned. */
  run(): void {
    const callbacks = this.callbacks;
    this.callbacks = null;
    if (!callbacks) return;
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        process.stderr.write(`gatehouse: an after-commit callback failed: ${String(error)}\n`);
      }
    }
  }
}

/** SQLite's "another connection holds the lock" (after the wait the store allows). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** The SQLite database cannot take the work right now (locked past the wait, disk full, I/O error): an outage, not a bug. */
export function isSqliteOutage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return isSqliteBusy(error) || (typeof code === 'string' && (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_READONLY'));
}
