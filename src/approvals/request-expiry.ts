/**
 * Pending approval requests whose time ran out are recorded as expired about when they run out,
 * not when a claim or a decision next touches them: the `approval_expired` event's `ts` is then
 * the time an auditor looks for, and a request nobody retries still has its end in the log.
 * The state change and its event commit together (Gate.expire), as every other change does.
 *
 * Several instances may sweep one PostgreSQL database: each request is expired in its own
 * transaction under its row lock, re-checked there, and a request another transaction holds
 * (a claim renewing it, a decision, another sweeper) is skipped and seen again next time.
 *
 * The operation's exclusive scope is not given back here: a claim that meets the hold takes it
 * over (operations/scope-holds.ts). That is the one rule for requests and grants alike, and
 * grants run out with nothing sweeping them.
 */
import { InvariantError } from '../core/errors.js';
import { startPeriodicTask, type PeriodicTask } from '../core/periodic-task.js';
import type { Gate } from './gate.js';
import { loadOperation, type ApprovalDeps } from './records.js';

/** Requests expired per pass at most; a larger burst finishes on the next passes (one a second). */
export const EXPIRY_BATCH = 100;

/** One pass: the requests due now (oldest first, up to EXPIRY_BATCH) expired; returns how many. */
export async function expireDueRequests(deps: ApprovalDeps, gate: Gate): Promise<number> {
  const due = await deps.store.db.selectFrom('approvals').select(['account_id', 'id'])
    .where('state', '=', 'pending').where('expires_at', '<=', deps.clock.now())
    .orderBy('expires_at').limit(EXPIRY_BATCH).execute();
  let expired = 0;
  for (const { account_id: accountId, id } of due) expired += await expireOne(deps, gate, accountId, id);
  return expired;
}

function expireOne(deps: ApprovalDeps, gate: Gate, accountId: string, id: string): Promise<number> {
  return deps.store.transact(async (trx) => {
    const row = await deps.store.forUpdate(trx.selectFrom('approvals').selectAll()
      .where('account_id', '=', accountId).where('id', '=', id), { skipLocked: true }).executeTakeFirst();
    // Held elsewhere (skipped), or decided or renewed since the pass read it.
    if (row === undefined || row.state !== 'pending' || Number(row.expires_at) > deps.clock.now()) return 0;
    const op = await loadOperation(trx, row.account_id, row.operation_id);
    if (!op) throw new InvariantError(`approval ${row.id} points at the missing operation ${row.operation_id}`);
    await gate.expire(trx, row, op);
    return 1;
  });
}

/** A pass about every second (startPeriodicTask: never overlapping the previous one). */
export function startExpirySweeper(deps: ApprovalDeps, gate: Gate, onError: (error: unknown) => void, intervalMs = 1000): PeriodicTask {
  return startPeriodicTask(() => expireDueRequests(deps, gate), onError, intervalMs);
}
