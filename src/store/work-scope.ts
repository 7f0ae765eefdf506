/**
 * What one request's units of work may still do. The HTTP edge makes one per request
 * (http/deadline.ts); the domain passes it to each unit it hands the store (`transact(unit,
 * { scope })`), and the store reads it when a unit starts and just before it commits.
 *
 * Passed, not ambient: AsyncLocalStorage on Node 20 runs a promise hook on every promise of the
 * process (new-key claims were × 1.076 without it), and an ambient scope leaks into work a request
 * merely set off (a group commit's next batch, after-commit work) and abandons it with the request.
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
