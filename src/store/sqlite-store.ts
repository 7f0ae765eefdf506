import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../schema/database.js';
import { AfterCommit, isSqliteBusy as isBusy, isSqliteOutage, StoreUnavailableError, type ArrivalSignal, type CommitObserver, type Db, type Store, type TransactOptions, type UnitOfWork } from './store.js';
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
/** The longest a batch is held while connections keep arriving: about what one batch of claims takes to run and commit, so the latency it adds stays below one batch's. */
export const ARRIVAL_HOLD_MS = 10;

/**
 * How often the store notes that the event loop runs; the gap that counts as a stall (below any
 * client timeout worth the name); and how long after one units stay careful (SqliteStore.turn):
 * the requests that piled up meanwhile come in over many turns (one connection accepted per turn).
 */
const TICK_MS = 100;
const STALL_MS = 500;
const CAREFUL_AFTER_STALL_MS = 2_000;

interface Unit {
  run: (trx: Db, work: UnitOfWork) => Promise<unknown>;
  /** The request the unit belongs to, taken when it was queued (a batch runs in the first unit's async context). */
  scope: WorkScope | undefined;
  /** performance.now() when queued: the busy wait counts from here, so batches queued behind a wait do not wait again. */
  queuedAt: number;
  /** The store's turn when queued (SqliteStore.turn). */
  queuedTurn: number;
  /** Queued right after the event loop stalled: it runs two turns after its own at the earliest (SqliteStore.turn). */
  careful: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * SQLite in WAL mode with synchronous=FULL: a commit returns only once the WAL is on disk.
 * Concurrent units are group-committed: one BEGIN IMMEDIATE … COMMIT (one fsync) carries a batch,
 * and no unit is acknowledged before its batch's COMMIT. (The fsync runs on the event loop: moving
 * it to the thread pool was measured twice and bought nothing over HTTP, BENCHMARKS.md.)
 *
 * As on PostgreSQL (postgres-group-commit.ts), a batch runs its units without savepoints: a
 * SAVEPOINT and its RELEASE per unit, and the pages SQLite copies to undo one unit alone, were ~3 %
 * of a claim's CPU. A unit that throws cannot then be undone alone, so the whole batch rolls back:
 * the thrower gets its error, and the units that had run (or not yet) run again in the next
 * batch, which is guarded (each unit in a savepoint) until a batch goes through clean, so that a
 * run of failing requests cannot make the others run more than twice.
 */
export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly db: Db;
  private readonly raw: BetterSqlite3.Database;
  private readonly queue: Unit[] = [];
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  /** Transaction control, prepared once: a guarded batch runs two of these per unit. */
  private readonly control: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', BetterSqlite3.Statement>;
  private draining = false;
  /**
   * Turns of the event loop the drain has seen (one per setImmediate it awaited). A batch runs to
   * its COMMIT without yielding, and a unit queued from a request read in a turn's I/O phase
   * runs in that same turn. After a stall (the process stopped, the loop blocked), a request read
   * then may have waited unread long enough for its client to give up: its FIN is in the kernel
   * behind it, and is read only in the next I/O phase, where it abandons the request
   * (http/deadline.ts). So a unit queued right after a stall (`careful`) waits for that phase: two
   * turns after its own. Not every unit: that wait cost new-key claims ×0.86–0.91 (BENCHMARKS.md,
   * twenty-ninth session).
   */
  private turn = 0;
  /** When the loop last ran this store's tick (performance.now()); a gap past STALL_MS is a stall. */
  private tickedAt = performance.now();
  /** Units queued before this (performance.now()) are careful: CAREFUL_AFTER_STALL_MS past the last stall seen. */
  private carefulUntil = 0;
  private readonly ticker: NodeJS.Timeout;
  /** Each unit in its own SAVEPOINT: after a batch that one unit rolled back, until a batch goes through clean. */
  private guarded = false;
  onCommit: CommitObserver | null = null;
  /** Never called: one writer at a time holds the whole file. */
  beforeAccountBatch: Store['beforeAccountBatch'] = null;
  arrivals: ArrivalSignal | null = null;

  constructor(file: string, options: { readonly?: boolean } = {}) {
    if (!options.readonly) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.raw = new BetterSqlite3(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
    this.raw.pragma(`busy_timeout = ${options.readonly ? BUSY_WAIT_MS : BUSY_TIMEOUT_PRAGMA_MS}`);
    if (!options.readonly) {
      this.raw.pragma('journal_mode = WAL');
      this.raw.pragma('synchronous = FULL');
    }
    // A guarded batch runs each unit in a SAVEPOINT, so SQLite keeps the pages a unit changes in a statement
    // journal (to roll that unit back alone). Past 64 KiB it spills that journal to a temp file, and a
    // file is not truncated at RELEASE: it grew over the whole batch, two pwrite calls per page a unit
    // touched (strace, 42,000 claims and reports: 1,216,868 pwrite calls; in memory, 193,531). It
    // holds nothing a crash needs (the WAL does), so it stays in memory; so do temp b-trees, which
    // the service's queries keep small (every listing is paged).
    this.raw.pragma('temp_store = MEMORY');
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
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

  /**
   * A compiled statement inside a batch (compiled-statement.ts): what Kysely's SQLite driver would
   * answer, without its executor. The parameters go as arguments, not as one array: better-sqlite3
   * reads an array's elements through V8's API one Get() at a time (its binding fell from 53.7k to
   * 36.0k instructions per claim, bench/claim-instructions.ts).
   */
  private readonly runCompiled: DirectRunner = (text, parameters) => {
    const statement = this.prepare(text);
    if (statement.reader) return { rows: statement.all(...parameters) };
    const { changes, lastInsertRowid } = statement.run(...parameters);
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
      const queuedAt = performance.now();
      // The tick may not have run yet since the loop came back: the gap itself says so.
      const careful = queuedAt < this.carefulUntil || queuedAt - this.tickedAt > STALL_MS;
      this.queue.push({ run, scope, queuedAt, queuedTurn: this.turn, careful, resolve: settle(resolve as (value: unknown) => void), reject: settle(reject) });
      if (!this.draining) void this.drain();
    });
  }

  forUpdate<QB extends SelectQueryBuilder<any, any, any>>(query: QB, _options?: { skipLocked?: boolean }): QB {
    return query;
  }

  async close(): Promise<void> {
    clearInterval(this.ticker);
    while (this.draining || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
    await this.db.destroy();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        // Let the event loop hand us every request that arrived during the last fsync.
        await this.nextTurn();
        await this.letArrivalsIn();
        const batch = this.queue.splice(0, this.ready());
        if (batch.length === 0) continue;
        const outcome = new BatchOutcome(batch);
        try {
          await this.begin(batch[0]!.queuedAt + BUSY_WAIT_MS);
          await this.db.connection().execute((conn) => {
            runDirectly(conn, this.runCompiled);
            return this.runBatch(conn, outcome);
          });
        } catch (error) {
          // No connection (the store was closed), the lock not had in time, or SQLite itself aborted
          // the transaction under a unit (disk full, I/O error): the batch fails, it does not hang,
          // and the next one starts clean.
          if (this.raw.open && this.raw.inTransaction) this.control.rollback.run();
          outcome.failAll(reported(error));
        }
        this.queue.unshift(...outcome.again);
      }
    } finally {
      this.draining = false;
    }
  }

  /**
   * Node 20's libuv accepts one connection per event-loop turn (libuv #3696, since 1.45), and each
   * batch holds its turn while it runs and while its COMMIT fsyncs. A burst of new connections
   * (gateways reconnecting after a restart) would be accepted one per batch: the 50th after
   * ~450 ms (BENCHMARKS.md). While
   * connections keep arriving, the loop takes short turns (accept, read the requests) before the
   * batch, for at most ARRIVAL_HOLD_MS; the requests they bring join this batch.
   */
  private async letArrivalsIn(): Promise<void> {
    if (!this.arrivals) return;
    const until = performance.now() + ARRIVAL_HOLD_MS;
    while (this.arrivals() && performance.now() < until) await this.nextTurn();
  }

  private tick(): void {
    const now = performance.now();
    if (now - this.tickedAt > STALL_MS) this.carefulUntil = now + CAREFUL_AFTER_STALL_MS;
    this.tickedAt = now;
  }

  private async nextTurn(): Promise<void> {
    await nextTurn();
    this.turn++;
  }

  /** How many units at the queue's head may run now (up to MAX_BATCH): all, but a careful one queued less than two turns ago (`turn`). */
  private ready(): number {
    let n = 0;
    while (n < this.queue.length && n < MAX_BATCH && (!this.queue[n]!.careful || this.queue[n]!.queuedTurn + 2 <= this.turn)) n++;
    return n;
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

  private async runBatch(conn: Db, outcome: BatchOutcome): Promise<void> {
    const guarded = this.guarded;
    for (const unit of outcome.batch) {
      try {
        // A unit whose request was abandoned while it queued is not run.
        unit.scope?.unitStarting();
      } catch (error) {
        outcome.answer(unit, error);
        continue;
      }
      const work = new AfterCommit();
      if (guarded) this.control.savepoint.run();
      try {
        const value = await unit.run(conn, work);
        // The last moment to give up: after this the request's answer must say it may have been written.
        unit.scope?.unitCommitting();
        if (guarded) this.control.release.run();
        outcome.ran(unit, value, work);
      } catch (error) {
        // SQLite rolled the whole transaction back itself (disk full, I/O error): the batch has failed.
        if (!this.raw.inTransaction) throw error;
        if (guarded) {
          this.control.rollbackTo.run();
          this.control.release.run();
          outcome.answer(unit, reported(error));
          continue;
        }
        this.control.rollback.run();
        this.guarded = true;
        outcome.answer(unit, reported(error));
        outcome.runAgain();
        return;
      }
    }
    const began = performance.now();
    this.control.commit.run();
    if (guarded) this.guarded = false;
    this.onCommit?.(outcome.committedCount, (performance.now() - began) / 1000);
    outcome.committed();
  }
}

/** What a unit's caller is told: SQLite's outages (busy, disk full, I/O) as store_unavailable, anything else as it is. */
function reported(error: unknown): unknown {
  return isSqliteOutage(error) ? new StoreUnavailableError(error) : error;
}

/** What becomes of each unit of one batch: answered, waiting for the COMMIT, or handed back to run again. */
class BatchOutcome {
  private readonly open: Set<Unit>;
  private readonly done: Array<{ unit: Unit; value: unknown; work: AfterCommit }> = [];
  /** Units to run in the next batch: the batch was rolled back under them. */
  readonly again: Unit[] = [];

  constructor(readonly batch: Unit[]) {
    this.open = new Set(batch);
  }

  get committedCount(): number {
    return this.done.length;
  }

  answer(unit: Unit, error: unknown): void {
    this.open.delete(unit);
    unit.reject(error);
  }

  ran(unit: Unit, value: unknown, work: AfterCommit): void {
    this.done.push({ unit, value, work });
  }

  /** The batch was rolled back by one unit's failure: every unit not answered goes again, in order. */
  runAgain(): void {
    this.again.push(...this.open);
    this.open.clear();
  }

  /** The batch failed as a whole: every unit not answered gets the error. */
  failAll(error: unknown): void {
    for (const unit of this.open) unit.reject(error);
    this.open.clear();
  }

  committed(): void {
    // After-commit work runs once the batch is on disk, and never for a unit rolled back.
    for (const { work } of this.done) work.run();
    for (const { unit, value } of this.done) {
      this.open.delete(unit);
      unit.resolve(value);
    }
  }
}
