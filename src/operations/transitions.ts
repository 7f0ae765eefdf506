import { sql } from 'kysely';
import type { JsonValue } from '../core/json.js';
import { InvariantError } from '../core/errors.js';
import { affectedRows, compiledOnce } from '../store/compiled-statement.js';
import { rfc3339 } from '../core/time.js';
import type { EventType } from '../ledger/event-input.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Db, Dialect } from '../store/store.js';
import type { IssuedLease } from './lease.js';
import { changeEvent } from './operation-events.js';
import type { OperationRow } from './operation-json.js';
import { LEASED_STATES, type OperationState } from './states.js';

/**
 * The state machine of an operation (docs/retry-contract.md#states-and-allowed-reports), as one table: every change of an
 * operation's state, from anywhere (reports, resolve, lease expiry, approval decisions,
 * the lease after approval), is a row here and goes through `applyTransition`.
 *
 * A new transition: add a row, then call `applyTransition` with its name from the module
 * that decides it (approvals reach it through the `OperationPort` in approvals/seam.ts).
 * Creating an operation (the claim's insert) is not a transition: it has no `from`.
 */
export interface TransitionRule {
  /** The states the transition may start from; anything else is a caller's bug (or, for reports, `invalid_transition`). */
  from: readonly OperationState[];
  /** The state afterwards; several when the caller picks (an outcome); null when the state stays (heartbeat). */
  to: readonly OperationState[] | null;
  /** The event recorded with the change; null records nothing (a heartbeat). */
  event: EventType | null;
  /** keep the lease; clear it (nobody may report any more); issue a new one; extend the one held. */
  lease: 'keep' | 'clear' | 'issue' | 'extend';
  /** release: the operation has ended, its exclusive scope is free for the next one. */
  scope: 'keep' | 'release';
}

export const TRANSITIONS = {
  // Reports of the lease holder. completed and canceled keep the lease hash, so an identical
  // repeat of the report is still recognised as the holder's and answered 200 (reports.ts).
  heartbeat: { from: LEASED_STATES, to: null, event: null, lease: 'extend', scope: 'keep' },
  sent: { from: ['running'], to: ['sent'], event: 'sent', lease: 'keep', scope: 'keep' },
  accepted: { from: ['sent'], to: ['accepted'], event: 'accepted', lease: 'keep', scope: 'keep' },
  completed: { from: ['sent', 'accepted'], to: ['succeeded', 'failed'], event: 'completed', lease: 'keep', scope: 'release' },
  canceled: { from: ['running'], to: ['canceled'], event: 'canceled', lease: 'keep', scope: 'release' },
  // The lease ran out before a terminal report: the write may or may not have happened. The scope
  // stays held: an unknown operation may still be changing what the scope protects.
  lease_expired: { from: LEASED_STATES, to: ['unknown'], event: 'lease_expired', lease: 'keep', scope: 'keep' },
  // An admin settles an unknown operation; the lost lease holder is fenced off for good.
  resolved: { from: ['unknown'], to: ['succeeded', 'failed', 'canceled'], event: 'resolved', lease: 'clear', scope: 'release' },
  // Approval decisions (approvals/decisions.ts, gate.ts through the OperationPort).
  approved: { from: ['awaiting_approval'], to: ['approved'], event: 'approved', lease: 'clear', scope: 'keep' },
  denied: { from: ['awaiting_approval'], to: ['denied'], event: 'denied', lease: 'clear', scope: 'release' },
  // The request or the grant ran out (from running: the grant expired before `sent`): back to awaiting a new approval.
  approval_expired: { from: ['awaiting_approval', 'approved', 'running'], to: ['awaiting_approval'], event: 'approval_expired', lease: 'clear', scope: 'keep' },
  // A retried claim of an approved operation takes the lease (claim-approval.ts).
  leased: { from: ['approved'], to: ['running'], event: 'leased', lease: 'issue', scope: 'keep' },
  // A claim with the same key and fingerprint on a `canceled` operation: the write was never made,
  // so the key is not burnt and the operation takes a new lease (claim-release.ts). The scope,
  // released at cancel, is taken again by the caller first. The only way out of a terminal state.
  leased_again: { from: ['canceled'], to: ['running'], event: 'leased', lease: 'issue', scope: 'keep' },
  // The same for an operation that needed approval: it goes back to `approved` and the claim's
  // approval step decides at once (the grant still valid → leased; run out → approval_expired),
  // which records the event; nothing is recorded for this step of the same transaction.
  reopened: { from: ['canceled'], to: ['approved'], event: null, lease: 'clear', scope: 'keep' },
} as const satisfies Record<string, TransitionRule>;

export type TransitionName = keyof typeof TRANSITIONS;

/** Whether `name` may start from `state`: the check behind `409 invalid_transition`. */
export function transitionAllowed(name: TransitionName, state: string): boolean {
  return (TRANSITIONS[name].from as readonly string[]).includes(state);
}

export interface TransitionInput {
  actor: string | null;
  nowMs: number;
  /** The state afterwards, when the rule lets the caller pick one. */
  to?: OperationState;
  /** The event's (sealed) payload. */
  payload?: JsonValue;
  /** Facts the transition sets on the row with the state. */
  set?: { provider_ref?: string | null; response_status?: number | null; response_seq?: number | null; lease_seconds?: number };
  /** The event holds the stored response: the row points at its seq. */
  responseInEvent?: boolean;
  /** For lease 'issue'. */
  lease?: IssuedLease;
  /**
   * The agent run of the request that caused it, when it names one. A transition that issues a
   * lease records it on the row too: the events of that lease (sent, completed, …) then name the
   * run that holds it, which may not be the one that first claimed (canceled → re-leased by
   * another run, approved → leased by a retry from another run).
   */
  agentRunId?: string | null;
}

/**
 * The one writer of an operation's state: appends the transition's event, updates the row
 * conditionally on the version it was read at (a row changed underneath is a bug of the
 * caller, which must hold the row's lock, and rolls the whole unit back), and releases the
 * exclusive scope when the operation ends. Returns the row as it now is.
 */
export async function applyTransition(
  trx: Db, ledger: Ledger, row: OperationRow, name: TransitionName, input: TransitionInput,
): Promise<OperationRow> {
  const rule: TransitionRule = TRANSITIONS[name];
  if (!transitionAllowed(name, row.state)) throw new InvariantError(`transition ${name} from ${row.state} (operation ${row.id})`);
  const state = rule.to === null ? row.state : (input.to ?? rule.to[0]!);
  if (rule.to !== null && !rule.to.includes(state as OperationState)) throw new InvariantError(`transition ${name} cannot end in ${state}`);
  const leaseHolder = rule.lease === 'issue' && input.agentRunId != null ? { agent_run_id: input.agentRunId } : {};
  const next: OperationRow = {
    ...row, ...input.set, state, ...leaseColumns(rule, row, input), ...leaseHolder, updated_at: rfc3339(input.nowMs), version: row.version + 1,
  };
  if (rule.event !== null) {
    const event = await ledger.append(trx, {
      ...changeEvent(next, rule.event, input.actor, input.payload), ...(input.agentRunId != null ? { agent_run_id: input.agentRunId } : {}),
    });
    if (input.responseInEvent) next.response_seq = event.seq;
  }
  if (affectedRows(await updateRow(trx, { row, next })) !== 1) throw new InvariantError(`operation ${row.id} changed under transition ${name}`);
  if (rule.scope === 'release' && row.exclusive_scope !== null) {
    await trx.deleteFrom('scope_holds')
      .where('account_id', '=', row.account_id).where('scope', '=', row.exclusive_scope).where('operation_id', '=', row.id)
      .execute();
  }
  return next;
}

/** One statement text for every transition, built and compiled once (compiled-statement.ts). */
const updateRow = compiledOnce(
  (db, { row, next }: { row: OperationRow; next: OperationRow }) => db.updateTable('operations')
    .set({
      state: next.state, provider_ref: next.provider_ref, response_status: next.response_status, response_seq: next.response_seq,
      lease_token_hash: next.lease_token_hash, lease_expires_at: next.lease_expires_at, lease_seconds: next.lease_seconds,
      agent_run_id: next.agent_run_id, updated_at: next.updated_at, version: sql`version + 1`,
    })
    .where('account_id', '=', row.account_id).where('id', '=', row.id).where('version', '=', row.version),
  ({ row, next }) => [
    next.state, next.provider_ref, next.response_status, next.response_seq, next.lease_token_hash, next.lease_expires_at, next.lease_seconds,
    next.agent_run_id, next.updated_at, row.account_id, row.id, row.version,
  ],
);

function leaseColumns(rule: TransitionRule, row: OperationRow, input: TransitionInput): Pick<OperationRow, 'lease_token_hash' | 'lease_expires_at'> {
  switch (rule.lease) {
    case 'keep':
      return { lease_token_hash: row.lease_token_hash, lease_expires_at: row.lease_expires_at };
    case 'clear':
      return { lease_token_hash: null, lease_expires_at: null };
    case 'extend':
      return { lease_token_hash: row.lease_token_hash, lease_expires_at: input.nowMs + row.lease_seconds * 1000 };
    case 'issue':
      if (!input.lease) throw new InvariantError('a transition that issues a lease needs one');
      return { lease_token_hash: input.lease.tokenHash, lease_expires_at: input.lease.expiresAtMs };
  }
}

/**
 * A lease that ran out before a terminal report turns the operation `unknown`, in the
 * caller's transaction on the locked row. Returns the row as it is afterwards.
 */
export async function expireIfDue(trx: Db, ledger: Ledger, row: OperationRow, nowMs: number): Promise<OperationRow> {
  if (!transitionAllowed('lease_expired', row.state) || row.lease_expires_at === null || row.lease_expires_at > nowMs) return row;
  return applyTransition(trx, ledger, row, 'lease_expired', { actor: null, nowMs });
}

/**
 * Operations still leased whose lease ran out by `nowMs`, oldest first (an account's, or all).
 * On the index led by the state (migration 0007): finished operations keep their lease's expiry,
 * and must not be read to find the few still leased.
 */
export function dueLeases(db: Db, nowMs: number, accountId: string | undefined, limit: number) {
  let due = db.selectFrom('operations').select('id')
    .where('state', 'in', TRANSITIONS.lease_expired.from).where('lease_expires_at', '<=', nowMs);
  if (accountId !== undefined) due = due.where('account_id', '=', accountId);
  return due.orderBy('lease_expires_at').limit(limit);
}

/**
 * The `lease_expired` transition for a batch (the sweeper's): one conditional UPDATE of up to
 * `limit` operations whose lease ran out by `nowMs` (oldest first; on PostgreSQL rows another
 * transaction holds are skipped with `skipLocked`, else waited for), then their events, one
 * append statement per account. Conditional on the state and the expiry when the row is
 * locked, so a report that moved an operation since keeps it out, and of several instances
 * only one turns each operation. The same change as `applyTransition` makes for one row:
 * state, updated_at and version; lease and scope kept (the rule's 'keep').
 */
export async function expireDueLeases(
  trx: Db, ledger: Ledger, dialect: Dialect, options: { nowMs: number; accountId?: string; limit: number; skipLocked: boolean },
): Promise<OperationRow[]> {
  const rule = TRANSITIONS.lease_expired;
  const { nowMs, accountId, limit, skipLocked } = options;
  let due = dueLeases(trx, nowMs, accountId, limit);
  if (dialect === 'postgres') due = skipLocked ? due.forUpdate().skipLocked() : due.forUpdate();
  const expired: OperationRow[] = await trx.updateTable('operations')
    .set({ state: rule.to[0], updated_at: rfc3339(nowMs), version: sql`version + 1` })
    .where('id', 'in', due)
    .where('state', 'in', rule.from).where('lease_expires_at', '<=', nowMs)
    .returningAll().execute();
  // One order of chain heads across sweepers, so two never wait on each other's.
  expired.sort((a, b) => (a.account_id < b.account_id ? -1 : a.account_id > b.account_id ? 1 : (a.lease_expires_at ?? 0) - (b.lease_expires_at ?? 0)));
  await ledger.appendAll(trx, expired.map((row) => changeEvent(row, rule.event, null)));
  return expired;
}
