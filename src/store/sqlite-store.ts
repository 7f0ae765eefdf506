import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../schema/database.js';
import { AfterCommit, isSqliteBusy as isBusy, isSqliteOutage, StoreUnavailableError, type CommitObserver, type Db, type Store, type TransactOptions, type UnitOfWork } from './store.js';
import type { WorkScope } from './work-scope.js';
import { runDirectly, type DirectRunner } from './compiled-statement.js';

const MAX_BATCH = 256;
/** Distinct SQL texts kept prepared; `in (…)` lists of varying length make new texts, so the cache is bounded. */
const MAX_STATEMENTS = 500;

/**
 * How long a batch waits for another process's write lock (a CLI verb writing, another
 * connection) before its units fail with store_unavailable. SQLite's own busy_timeout sleeps in
 * the calling thread, which here is the only one: it is kept tiny, and the wait is made of
 * short asynchronous retries, so requests that need no lock (health answers, shedding, reads)
 * are still served while a batch waits.
 */
export const BUSY_WAIT_MS = 5_000;
const BUSY_TIMEOUT_PRAGMA_MS = 10;
const BUSY_RETRY_MS = 25;

interface Unit {
  run: (trx: Db, work: UnitOfWork) => Promise<unknown>;
  /** The request the unit belongs to, taken when it was queued (a batch runs in the first unit's async context). */
  scope: WorkScope | undefined;
  /** performance.now() when queued: the busy wait counts from here, so batches queued behind a wait do not wait again. */
  queuedAt: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * SQLite in WAL mode with synchronous=FULL: a commit returns only once the WAL is on disk.
 * Concurrent units are group-committed: one BEGIN IMMEDIATE … COMMIT (one fsync) carries a batch,
 * each unit inside its own SAVEPOINT so a failing unit rolls back alone, and no unit is
 * acknowledged before its batch's COMMIT. (The fsync runs on the event loop: moving it to the
 * thread pool was measured twice and bought nothing over HTTP, BENCHMARKS.md.)
 */
export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly db: Db;
  private readonly raw: BetterSqlite3.Database;
  private readonly queue: Unit[] = [];
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  /** Transaction control, prepared once: a batch runs two of these per unit. */
  private readonly control: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', BetterSqlite3.Statement>;
  private draining = false;
  onCommit: CommitObserver | null = null;

  constructor(file: string, options: { readonly?: boolean } = {}) {
    if (!options.readonly) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.raw = new BetterSqlite3(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
    this.raw.pragma(`busy_timeout = ${options.readonly ? BUSY_WAIT_MS : BUSY_TIMEOUT_PRAGMA_MS}`);
    if (!options.readonly) {
      this.raw.pragma('journal_mode = WAL');
      this.raw.pragma('synchronous = FULL');
    }
    // A batch runs each unit in a SAVEPOINT, so SQLite keeps the pages a unit changes in a statement
    // journal (to roll that unit back alone). Past 64 KiB it spills that journal to a temp file, and a
    // file is not truncated at RELEASE: it grew over the whole batch, two pwrite calls per page a unit
    // touched (strace, 42,000 claims and reports: 1,216,868 pwrite calls; in memory, 193,531). It
    // holds nothing a crash needs (the WAL does), so it stays in memory; so do temp b-trees, which
    // the service's queries keep small (every listing is paged).
    this.raw.pragma('temp_store = MEMORY');
    this.control = {
      begin: this.raw.prepare('BEGIN IMMEDIATE'),
      commit: this.raw.prepare('COMMIT'),
      rollback: this.raw.prepare('ROLLBACK'),
      savepoint: this.raw.prepare('SAVEPOINT unit'),
      release: this.raw.prepare('RELEASE unit'),
      rollbackTo: this.raw.prepare('ROLLBACK TO unit'),
    };
    // Kysely prepares every query afresh; preparing costs as much as running a small one, so
    // statements are kept by SQL text (a statement still being iterated is never handed out twice).
    const database = { prepare: (text: string) => this.prepare(text), close: () => this.raw.close() };
    this.db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  }

  /** A compiled statement inside a batch (compiled-statement.ts): what Kysely's SQLite driver would answer, without its executor. */
  private readonly runCompiled: DirectRunner = (text, parameters) => {
    const statement = this.prepare(text);
    if (statement.reader) return { rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  };

  private prepare(text: string): BetterSqlite3.Statement {
    const cached = this.statements.get(text);
    if (cached && !cached.busy) return cached;
    const statement = this.raw.prepare(text);
    if (cached) return statement;
    if (this.statements.size >= MAX_STATEMENTS) this.statements.delete(this.statements.keys().next().value!);
    this.statements.set(text, statement);
    return statement;
  }

  transact<T>(run: (trx: Db, work: UnitOfWork) => Promise<T>, options: TransactOptions = {}): Promise<T> {
    const scope = options.scope;
    try {
      scope?.unitQueued();
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      const settle = <V>(done: (value: V) => void) => (value: V) => {
        scope?.unitSettled();
        done(value);
      };
      this.queue.push({ run, scope, queuedAt: performance.now(), resolve: settle(resolve as (value: unknown) => void), reject: settle(reject) });
      if (!this.draining) void this.drain();
    });
  }

  forUpdate<QB extends SelectQueryBuilder<any, any, any>>(query: QB, _options?: { skipLocked?: boolean }): QB {
    return query;
  }

  async close(): Promise<void> {
    while (this.draining || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
    await this.db.destroy();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        // Let the event loop hand us every request that arrived during the last fsync.
        await new Promise((r) => setImmediate(r));
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          await this.begin(batch[0]!.queuedAt + BUSY_WAIT_MS);
          await this.db.connection().execute((conn) => {
            runDirectly(conn, this.runCompiled);
            return this.runBatch(conn, batch);
          });
        } catch (error) {
          // No connection (the store was closed), the lock not had in time, or SQLite itself aborted
          // the transaction under a unit (disk full, I/O error): the batch fails, it does not hang,
          // and the next one starts clean.
          if (this.raw.open && this.raw.inTransaction) this.control.rollback.run();
          const reported = isSqliteOutage(error) ? new StoreUnavailableError(error) : error;
          for (const unit of batch) unit.reject(reported);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** BEGIN IMMEDIATE, retried without blocking the event loop while another connection holds the write lock. */
  private async begin(giveUpAt: number): Promise<void> {
    for (;;) {
      try {
        this.control.begin.run();
        return;
      } catch (error) {
        if (!isBusy(error) || performance.now() >= giveUpAt) throw error;
        await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
      }
    }
  }

  private async runBatch(conn: Db, batch: Unit[]): Promise<void> {
    const settled: Array<{ unit: Unit; ok: boolean; value: unknown; work: AfterCommit }> = [];
    for (const unit of batch) {
      this.control.savepoint.run();
      const work = new AfterCommit();
      try {
        // A unit whose request was abandoned while it queued is not run; one abandoned while it
        // ran is rolled back to its savepoint. After this check it commits with the batch.
        unit.scope?.unitStarting();
        const value = await unit.run(conn, work);
        unit.scope?.unitCommitting();
        this.control.release.run();
        settled.push({ unit, ok: true, value, work });
      } catch (error) {
        this.control.rollbackTo.run();
        this.control.release.run();
        settled.push({ unit, ok: false, value: error, work });
      }
    }
    const began = performance.now();
    try {
      this.control.commit.run();
    } catch (error) {
      if (this.raw.inTransaction) this.control.rollback.run();
      const reported = isSqliteOutage(error) ? new StoreUnavailableError(error) : error;
      for (const { unit } of settled) unit.reject(reported);
      return;
    }
    this.onCommit?.(batch.length, (performance.now() - began) / 1000);
    // After-commit work runs once the batch is on disk, and never for a unit rolled back to its savepoint.
    for (const { ok, work } of settled) if (ok) work.run();
    for (const { unit, ok, value } of settled) (ok ? unit.resolve : unit.reject)(value);
  }
}

