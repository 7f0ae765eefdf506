import type { Db } from '../store/store.js';
import { lockOperation } from './operation-rows.js';
import { expireIfDue, TRANSITIONS } from './transitions.js';
import type { OperationDeps } from './claim-types.js';

const BATCH = 100;

/**
 * Turns operations whose lease ran out `unknown`, each in its own transaction
 * with its `lease_expired` event. Safe with several instances sweeping one
 * PostgreSQL: the transition is conditional, so only one of them wins per operation.
 * `accountId` limits it to one account (a list read brings its own account up to date).
 */
export async function sweepExpiredLeases(deps: OperationDeps, accountId?: string): Promise<number> {
  const nowMs = deps.clock.now();
  let query = deps.store.db.selectFrom('operations').select(['account_id', 'id'])
    .where('state', 'in', TRANSITIONS.lease_expired.from).where('lease_expires_at', '<=', nowMs);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const due = await query.orderBy('lease_expires_at').limit(BATCH).execute();
  let expired = 0;
  for (const { account_id, id } of due) {
    const changed = await deps.store.transact(async (trx: Db) => {
      // Re-read under the lock: a report may have moved the operation since the scan.
      const row = await lockOperation(deps.store, trx, account_id, id);
      return row !== undefined && (await expireIfDue(trx, deps.ledger, row, nowMs)) !== row;
    });
    if (changed) expired++;
  }
  return expired;
}

export interface Sweeper {
  /** Stops the timer and waits for a sweep in flight, so the store can close under it. */
  stop(): Promise<void>;
}

/** Runs the sweep about every second; a sweep never overlaps the previous one. */
export function startSweeper(deps: OperationDeps, onError: (error: unknown) => void, intervalMs = 1000): Sweeper {
  let inFlight: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (inFlight) return;
    inFlight = sweepExpiredLeases(deps).then(() => undefined, onError).finally(() => {
      inFlight = null;
    });
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await inFlight;
    },
  };
}
