import type { Db } from '../store/store.js';
import { startPeriodicTask, type PeriodicTask } from '../core/periodic-task.js';
import { dueLeases, expireDueLeases } from './transitions.js';
import type { OperationDeps } from './claim-types.js';

/**
 * Leases turned `unknown` per transaction: one conditional UPDATE per batch, and its
 * `lease_expired` events appended with one statement per account. 3,000 leases that ran out
 * together settle in a dozen short batches, well inside the contract's 5 s.
 */
export const SWEEP_BATCH = 250;
/** A read's own sweep gives up looking again after this many rounds (it only loops while others hold rows). */
const MAX_READ_ROUNDS = 200;

/**
 * Turns operations whose lease ran out `unknown`, in batches: each batch is one transaction with
 * one conditional UPDATE (still leased, still expired) and the `lease_expired` event of every row
 * it changed; batches follow one another until none is left.
 *
 * The background sweep (`accountId` absent) skips rows another transaction holds (PostgreSQL
 * `SKIP LOCKED`): several instances then share a burst instead of queueing on the same rows, and
 * a row a report holds right now is taken on the next round, a second later.
 *
 * A list read sweeps its own account (`accountId`) and waits for held rows instead, and looks
 * again until nothing due is left: `?state=unknown` must be complete when it says it is.
 */
export async function sweepExpiredLeases(deps: OperationDeps, accountId?: string): Promise<number> {
  const forRead = accountId !== undefined;
  let total = 0;
  for (let round = 0; ; round++) {
    const swept = await sweepBatch(deps, deps.clock.now(), accountId, !forRead);
    total += swept;
    if (swept === SWEEP_BATCH) continue;
    if (!forRead || round >= MAX_READ_ROUNDS || !(await anyDue(deps, deps.clock.now(), accountId))) return total;
  }
}

/** One batch in one transaction: the rows it turned `unknown`, each with its `lease_expired` event (transitions.ts). */
function sweepBatch(deps: OperationDeps, nowMs: number, accountId: string | undefined, skipLocked: boolean): Promise<number> {
  return deps.store.transact(async (trx: Db) =>
    (await expireDueLeases(trx, deps.ledger, deps.store.dialect, { nowMs, accountId, limit: SWEEP_BATCH, skipLocked })).length);
}

async function anyDue(deps: OperationDeps, nowMs: number, accountId: string | undefined): Promise<boolean> {
  return (await dueLeases(deps.store.db, nowMs, accountId, 1).executeTakeFirst()) !== undefined;
}

/** Runs the sweep about every second (startPeriodicTask: a sweep never overlaps the previous one). */
export function startSweeper(deps: OperationDeps, onError: (error: unknown) => void, intervalMs = 1000): PeriodicTask {
  return startPeriodicTask(() => sweepExpiredLeases(deps), onError, intervalMs);
}
