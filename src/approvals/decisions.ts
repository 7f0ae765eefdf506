import type { DecideApprovalBody } from '../core/request-bodies.js';
import type { Db } from '../store/store.js';
import { rfc3339 } from '../core/time.js';
import { signGrant } from '../core/grant.js';
import { DomainError } from '../core/errors.js';
import { constantTimeEqual } from '../core/hash.js';
import { transactOrRefuse, type Refusal } from '../store/refusals.js';
import { canActInAccount, requireRole, type Principal } from '../principals/roles.js';
import type { ApprovalView } from './seam.js';
import type { Gate } from './gate.js';
import { eventFacts } from './gate.js';
import type { WorkScope } from '../store/work-scope.js';
import { askedFor, loadOperation, viewOf, type ApprovalDeps, type ApprovalRow, type OperationFacts } from './records.js';

/** An approver's decision (schema/requests/decide-approval.json). */
export type DecisionInput = DecideApprovalBody;


/**
 * Records one approver's decision. The approver is the authenticated principal, never
 * a body field. One deny denies; `approvers_required` distinct approvals approve.
 */
export async function decide(
  deps: ApprovalDeps, gate: Gate, principal: Principal, approvalId: string, input: DecisionInput, workScope?: WorkScope,
): Promise<ApprovalView> {
  requireRole(principal, 'approver', 'admin');
  return transactOrRefuse(deps.store, async (trx): Promise<ApprovalView | Refusal> => {
    const row = await deps.store.forUpdate(trx.selectFrom('approvals').selectAll().where('id', '=', approvalId)).executeTakeFirst();
    if (!row || !canActInAccount(principal, row.account_id)) throw new DomainError('not_found', `no approval ${approvalId}`);
    const op = await loadOperation(trx, row.account_id, row.operation_id);
    if (!op) throw new DomainError('not_found', `no approval ${approvalId}`);
    // A requester is whoever asked for the write: the first claim (also an `attempted` event, but
    // on the row already read), the claim that requested this approval, or any later claim call.
    if (principal.id === op.requested_by || await askedFor(deps, trx, row, principal.id)) {
      throw new DomainError('self_approval', 'a principal that claimed this operation cannot decide on its approval');
    }
    const now = deps.clock.now();
    // An approved one ran out with its grant; a pending one with its request.
    const ranOut = row.grant_expires_at !== null
      ? `was approved, and its grant expired at ${rfc3339(Number(row.grant_expires_at))}`
      : `expired at ${rfc3339(Number(row.expires_at))}`;
    const expired = new DomainError('approval_expired', `approval ${row.id} ${ranOut}; a retry of the claim requests a new one`);
    if (row.state === 'expired') throw expired;
    if (row.state === 'pending' && now >= Number(row.expires_at)) {
      // Commit the expiry event, then answer 409: throwing here would roll it back. The service
      // expired it (actor null, as every expiry): this approver only came after the deadline.
      await gate.expire(trx, row, op);
      return { refusal: expired };
    }
    const earlier = await trx.selectFrom('approval_decisions').select('decision')
      .where('approval_id', '=', row.id).where('approver_id', '=', principal.id).executeTakeFirst();
    if (earlier) throw new DomainError('already_decided', `you already decided (${earlier.decision}) on approval ${row.id}`);
    if (row.state !== 'pending') throw new DomainError('invalid_transition', `approval ${row.id} is ${row.state}, no longer pending`);
    if (!constantTimeEqual(input.fingerprint, row.fingerprint)) {
      throw new DomainError('decision_fingerprint_mismatch', 'the fingerprint is not the one of this operation: reload the approval and check what you approve');
    }
    await record(deps, trx, row, op, principal, input, now);
    const fresh = await trx.selectFrom('approvals').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    return viewOf(trx, deps.ledger, fresh, now);
  }, { scope: workScope });
}

async function record(deps: ApprovalDeps, trx: Db, row: ApprovalRow, op: OperationFacts, principal: Principal, input: DecisionInput, now: number): Promise<void> {
  const decidedAt = rfc3339(now);
  const reason = input.reason ?? null;
  const event = await deps.ledger.append(trx, {
    ...eventFacts(op), type: 'approval_decided', actor: principal.id, state: 'awaiting_approval',
    payload: { approval_id: row.id, decision: input.decision, reason },
  });
  await trx.insertInto('approval_decisions')
    .values({ approval_id: row.id, approver_id: principal.id, decision: input.decision, decided_at: decidedAt, event_seq: event.seq }).execute();
  if (input.decision === 'deny') return deny(deps, trx, row, op, principal, reason, decidedAt);
  const approvals = await trx.selectFrom('approval_decisions').select('approver_id')
    .where('approval_id', '=', row.id).where('decision', '=', 'approve').orderBy('event_seq').execute();
  if (approvals.length >= Number(row.approvers_required)) await approve(deps, trx, row, op, principal, approvals.map((a) => a.approver_id), now);
}

async function deny(deps: ApprovalDeps, trx: Db, row: ApprovalRow, op: OperationFacts, principal: Principal, reason: string | null, decidedAt: string): Promise<void> {
  await trx.updateTable('approvals').set({ state: 'denied', decided_at: decidedAt }).where('id', '=', row.id).execute();
  // Denied is terminal: the transition also frees the exclusive scope for the next operation.
  await deps.operations.transition(trx, op, 'denied', { actor: principal.id, payload: { approval_id: row.id, reason } });
}

async function approve(deps: ApprovalDeps, trx: Db, row: ApprovalRow, op: OperationFacts, principal: Principal, approvedBy: string[], now: number): Promise<void> {
  const expiresAt = now + Number(row.grant_ttl_seconds) * 1000;
  const grant = signGrant(deps.signingKey, {
    approval_id: row.id, operation_id: op.id, account_id: op.account_id, idempotency_key: op.idempotency_key,
    fingerprint: row.fingerprint, approved_by: approvedBy, approved_at: rfc3339(now), expires_at: rfc3339(expiresAt),
  });
  await trx.updateTable('approvals').set({ state: 'approved', grant: JSON.stringify(grant), grant_expires_at: expiresAt, decided_at: rfc3339(now) })
    .where('id', '=', row.id).execute();
  await deps.operations.transition(trx, op, 'approved', { actor: principal.id, payload: { approval_id: row.id, grant: { ...grant } } });
}
