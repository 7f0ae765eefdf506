import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'kysely';
import { AfterCommit, type CommitObserver, type Db, type Store, type UnitOfWork } from './store.js';
import { WorkAbandonedError, type WorkScope } from './work-scope.js';
import { isConnectionLoss, isRetryable, reportedError, retryPause } from './postgres-errors.js';

/** Tries of one unit before its last error is the answer (a unit handed back by a batch another unit broke does not count). */
const MAX_ATTEMPTS = 8;
/** Units one transaction carries at most: bounds how long a batch holds its account's chain head. */
const MAX_BATCH = 100;

interface QueuedUnit {
  run: (trx: Db, work: UnitOfWork) => Promise<unknown>;
  scope: WorkScope | undefined;
  /** Tries that failed on this unit's own account (its error, or the store's). */
  failures: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Lane {
  queue: QueuedUnit[];
  /** Each unit in its own SAVEPOINT: after a batch that one unit rolled back, until a batch goes through clean. */
  guarded: boolean;
}

/**
 * PostgreSQL group commit, per account: the units of one account that queue up while a batch
 * runs share the next transaction, so they share one BEGIN, one COMMIT and one WAL flush, and
 * the account's chain-head row lock is taken once for them all.
 *
 * Every append to an account queues on that row lock, held through COMMIT. One transaction per
 * append made one account's event rate 1 / (lock hold time, a WAL flush included) on any number
 * of instances; a batch pays that once. Batches are per account so that one transaction locks
 * one chain head: two batches spanning the same two accounts in opposite orders would deadlock.
 *
 * A batch runs its units one after another on one connection without savepoints (a SAVEPOINT
 * and its RELEASE would double a claim's round trips). A unit that throws cannot be undone
 * alone, so the whole batch rolls back: the thrower gets its error, and the units that had
 * succeeded run again in the next batch, which is guarded (each unit in a savepoint) so that a
 * run of failing requests cannot make the others run more than twice. Nothing is acknowledged
 * before its batch's COMMIT returned. A unit that names no account is a batch of one: the same
 * retries and answers, in a transaction of its own.
 */
export class AccountGroupCommit {
  /** By account; a unit that names none has a lane of its own (a symbol), so it is a batch of one. */
  private readonly lanes = new Map<string | symbol, Lane>();

  constructor(
    private readonly db: Db,
    private readonly observer: () => CommitObserver | null,
    /** Store.beforeAccountBatch: the ledger's chain-head lock, taken before any unit of an account's batch. */
    private readonly beforeAccountBatch: () => Store['beforeAccountBatch'],
  ) {}

  run(laneKey: string | symbol, run: QueuedUnit['run'], scope: WorkScope | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const unit: QueuedUnit = { run, scope, failures: 0, resolve, reject };
      const lane = this.lanes.get(laneKey);
      if (lane) {
        lane.queue.push(unit);
        return;
      }
      const started: Lane = { queue: [unit], guarded: false };
      this.lanes.set(laneKey, started);
      void this.drain(laneKey, started);
    });
  }

  /** True while any unit is queued or running. */
  get busy(): boolean {
    return this.lanes.size > 0;
  }

  private async drain(laneKey: string | symbol, lane: Lane): Promise<void> {
    try {
      while (lane.queue.length > 0) {
        // Let the event loop hand over every unit that arrived during the last batch.
        await nextTurn();
        const { again, pause } = await this.runBatch(lane, typeof laneKey === 'string' ? laneKey : null, lane.queue.splice(0, MAX_BATCH));
        lane.queue.unshift(...again);
        if (pause) await pause;
      }
    } finally {
      // Synchronous with the last emptiness check: a unit queued from now on starts a new lane.
      this.lanes.delete(laneKey);
    }
  }

  /** Runs one batch to its end; never throws. Answers the units to run again, and a pause before that when the store failed. */
  private async runBatch(lane: Lane, account: string | null, batch: QueuedUnit[]): Promise<{ again: QueuedUnit[]; pause: Promise<void> | null }> {
    const guarded = lane.guarded;
    const outcome = new BatchOutcome(batch);
    let committing = false;
    try {
      await this.db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        try {
          const holdAccount = account === null ? null : this.beforeAccountBatch();
          if (holdAccount) await holdAccount(conn, account!);
          for (const unit of batch) await runUnit(conn, unit, guarded, outcome);
        } catch (error) {
          // On a lost connection the rollback fails too; the server has already rolled back.
          await sql`rollback`.execute(conn).catch(() => undefined);
          throw error;
        }
        committing = true;
        const began = performance.now();
        await sql`commit`.execute(conn);
        this.observer()?.(outcome.done.length, (performance.now() - began) / 1000);
      });
    } catch (error) {
      outcome.failed(error, committing);
      // A unit broke an unguarded batch: guard the next ones until one goes through clean.
      if (outcome.brokenBy !== null) lane.guarded = true;
      return { again: outcome.again, pause: outcome.pause };
    }
    if (guarded) lane.guarded = false;
    outcome.committed();
    return { again: outcome.again, pause: outcome.pause };
  }
}

/** A unit in the batch's transaction: on its own savepoint when guarded; unguarded, its failure is the batch's. */
async function runUnit(conn: Db, unit: QueuedUnit, guarded: boolean, outcome: BatchOutcome): Promise<void> {
  try {
    // A unit whose request was abandoned while it queued is not run.
    unit.scope?.unitStarting();
  } catch (error) {
    outcome.answer(unit, error);
    return;
  }
  const work = new AfterCommit();
  if (guarded) await sql`savepoint unit`.execute(conn);
  let value: unknown;
  try {
    value = await unit.run(conn, work);
    // The last moment to give up: after this the request's answer must say it may have been written.
    unit.scope?.unitCommitting();
  } catch (error) {
    if (!guarded || isConnectionLoss(error)) {
      outcome.brokenBy = { unit, error };
      throw error;
    }
    await sql`rollback to savepoint unit`.execute(conn);
    outcome.unitFailed(unit, error);
    return;
  }
  if (guarded) await sql`release savepoint unit`.execute(conn);
  outcome.done.push({ unit, value, work });
}

/** What becomes of each unit of one batch: answered, waiting for the COMMIT, or handed back to run again. */
class BatchOutcome {
  readonly done: Array<{ unit: QueuedUnit; value: unknown; work: AfterCommit }> = [];
  readonly again: QueuedUnit[] = [];
  /** The unguarded unit whose failure rolled the batch back. */
  brokenBy: { unit: QueuedUnit; error: unknown } | null = null;
  pause: Promise<void> | null = null;
  private readonly open: Set<QueuedUnit>;

  constructor(batch: QueuedUnit[]) {
    this.open = new Set(batch);
  }

  answer(unit: QueuedUnit, error: unknown): void {
    this.open.delete(unit);
    unit.reject(error);
  }

  /** The unit's own try failed (the batch goes on, or was rolled back because of it). */
  unitFailed(unit: QueuedUnit, error: unknown): void {
    if (error instanceof WorkAbandonedError) return this.answer(unit, error);
    if (isRetryable(error) || isConnectionLoss(error)) return this.tryAgain(unit, error);
    this.answer(unit, reportedError(error));
  }

  /** The batch's transaction did not commit, or its COMMIT's fate is unknown. */
  failed(error: unknown, committing: boolean): void {
    if (committing) {
      // Lost during COMMIT: it may or may not have been applied, so nothing is run again.
      for (const unit of [...this.open]) {
        if (isRetryable(error)) this.tryAgain(unit, error);
        else this.answer(unit, reportedError(error));
      }
      return;
    }
    if (this.brokenBy) this.unitFailed(this.brokenBy.unit, this.brokenBy.error);
    for (const unit of [...this.open]) {
      // A lost connection counts as one of every unit's tries.
      if (isConnectionLoss(error)) this.tryAgain(unit, error);
      // Another unit broke the batch: this one (it ran fine, or never ran) goes again as it is.
      else if (this.brokenBy) this.handBack(unit);
      // The batch itself failed (no connection, BEGIN refused): that is each unit's own failure,
      // answered or retried by the same rules, never handed back forever.
      else this.unitFailed(unit, error);
    }
  }

  committed(): void {
    // After-commit work runs once the batch is on disk, and never for a unit rolled back.
    for (const { work } of this.done) work.run();
    for (const { unit, value } of this.done) {
      this.open.delete(unit);
      unit.resolve(value);
    }
  }

  private tryAgain(unit: QueuedUnit, error: unknown): void {
    unit.failures++;
    if (unit.failures >= MAX_ATTEMPTS) return this.answer(unit, reportedError(error));
    this.pause ??= retryPause(unit.failures, isConnectionLoss(error));
    this.handBack(unit);
  }

  private handBack(unit: QueuedUnit): void {
    this.open.delete(unit);
    this.again.push(unit);
  }
}
