import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What one request's units of work may still do, told to the store without passing it through
 * every domain call: the HTTP edge runs the request inside a scope (AsyncLocalStorage), and the
 * store reads it when a unit starts and just before it commits.
 *
 * Once the scope is abandoned (the client went away, or the request deadline passed), a unit that
 * has not started is not run and a unit that has not reached COMMIT is rolled back. The check and
 * the mark "committing" happen in the same synchronous step as the abandonment is read, so the
 * edge knows for certain whether anything of the request can still commit: `abandon()` answers it.
 */
export class WorkScope {
  private abandonedFor: AbandonReason | null = null;
  /** Units handed to the store and not yet settled (queued, running, or committing). */
  private pending = 0;
  /** Units whose COMMIT was sent (it may have been applied even if its answer never came) or returned. */
  private committing = 0;

  get abandoned(): AbandonReason | null {
    return this.abandonedFor;
  }

  /**
   * Stops the scope's work. Answers what may still take effect: `mayHaveWritten` is true when a
   * unit of this request had already sent COMMIT (or committed), false when nothing it did can
   * commit any more; `storeBusy` when a unit was waiting on or working in the store.
   */
  abandon(reason: AbandonReason): { mayHaveWritten: boolean; storeBusy: boolean } {
    this.abandonedFor ??= reason;
    return { mayHaveWritten: this.committing > 0, storeBusy: this.pending > 0 };
  }

  /** A unit is handed to the store; throws, running nothing, when the scope was abandoned. */
  unitQueued(): void {
    this.throwIfAbandoned();
    this.pending++;
  }

  /** The unit starts running (a queued unit may wait behind others); throws when abandoned meanwhile. */
  unitStarting(): void {
    this.throwIfAbandoned();
  }

  /** Just before COMMIT: throws when abandoned (the caller rolls back), else the unit counts as possibly written. */
  unitCommitting(): void {
    this.throwIfAbandoned();
    this.committing++;
  }

  unitSettled(): void {
    this.pending--;
  }

  private throwIfAbandoned(): void {
    if (this.abandonedFor !== null) throw new WorkAbandonedError(this.abandonedFor);
  }
}

export type AbandonReason = 'client_gone' | 'deadline';

/** A unit of work not run, or rolled back, because its request was abandoned: nothing of it was written. */
export class WorkAbandonedError extends Error {
  constructor(readonly reason: AbandonReason) {
    super(reason === 'client_gone' ? 'the client went away before the work was done; nothing was written' : 'the request deadline passed before the work was done; nothing was written');
    this.name = 'WorkAbandonedError';
  }
}

const scopes = new AsyncLocalStorage<WorkScope>();

/** Runs `fn` with `scope` as the scope of every unit of work it starts. */
export function runInScope<T>(scope: WorkScope, fn: () => Promise<T>): Promise<T> {
  return scopes.run(scope, fn);
}

/** The scope of the request being served, if any (CLI verbs and background work have none). */
export function currentScope(): WorkScope | undefined {
  return scopes.getStore();
}

/** Runs `fn` outside any request's scope: shared work (a health probe several requests wait on) is no one request's to abandon. */
export function outsideScope<T>(fn: () => T): T {
  return scopes.exit(fn);
}
