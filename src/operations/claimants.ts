import type { Db } from '../store/store.js';
import type { EventType } from '../ledger/event-input.js';

/**
 * The events a claim call records on the operation it asked for (docs/formats.md#event-types). `scope_busy` is
 * not one: it is recorded on the operation holding the scope, by a claim that asked for another.
 */
const CLAIM_CALL_EVENTS: readonly EventType[] = ['attempted', 'approval_requested', 'retried', 'replayed', 'conflicted', 'reused', 'leased'];

/**
 * Whether the principal has made a claim call on this operation. Every claim is recorded with
 * its caller as the actor, so the operation's events answer it (the events_operation index).
 * The approvals domain asks it before a decision: whoever asked for the write, first or by a
 * later claim with the same key, is a requester and may not approve it (a second gateway key
 * that also holds the approver role could otherwise retry someone else's claim, approve it and
 * take the lease).
 */
export async function hasClaimed(db: Db, accountId: string, operationId: string, principalId: string): Promise<boolean> {
  const row = await db.selectFrom('events').select('seq')
    .where('account_id', '=', accountId).where('operation_id', '=', operationId)
    .where('actor', '=', principalId).where('type', 'in', CLAIM_CALL_EVENTS)
    .limit(1).executeTakeFirst();
  return row !== undefined;
}
