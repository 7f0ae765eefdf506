import type { Db, UnitOfWork } from '../store/store.js';
import { rfc3339 } from '../core/time.js';
import type { JsonValue } from '../core/json.js';
import { DomainError, InvariantError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { ApprovalPolicy } from '../policies/policies.js';
import type { ApprovalGate, ApprovalStanding, ApprovalView, GatedOperation, Grant, OperationSummary } from './seam.js';
import { buildView, readRequestPayload, viewOf, type ApprovalDeps, type ApprovalRow, type OperationFacts } from './records.js';

/**
 * The claim's side of approvals. Every method runs inside the claim's transaction,
 * so an approval, its events and the operation's state commit together.
 */
export class Gate implements ApprovalGate {
  constructor(
    private readonly deps: ApprovalDeps,
    /** Queues the webhook for a new request in the same transaction. */
    private readonly notify: (trx: Db, work: UnitOfWork, approval: { id: string; account_id: string }) => Promise<void>,
  ) {}

  async request(trx: Db, work: UnitOfWork, input: {
    operation: GatedOperation; requestedBy: { id: string }; policy: ApprovalPolicy; summary: OperationSummary | null; command: JsonValue;
  }): Promise<ApprovalView> {
    return this.create(trx, work, input.operation, input.requestedBy.id, input.policy, input.summary, input.command);
  }

  async standing(trx: Db, work: UnitOfWork, operation: GatedOperation, policy: ApprovalPolicy, askedBy: { id: string }): Promise<ApprovalStanding> {
    const row = await this.lockApproval(trx, operation);
    const now = this.deps.clock.now();
    const view = () => viewOf(trx, this.deps.ledger, row, now, operation);
    if (row.state === 'denied') return { kind: 'denied', approval: await view() };
    if (inForce(row, now)) {
      if (row.state === 'pending') return { kind: 'pending', approval: await view() };
      return { kind: 'granted', approval: await view(), grant: JSON.parse(row.grant!) as Grant };
    }
    // The request or the grant ran out before the lease: never a silent pass, always a new request,
    // made by this claim's caller (its approval_requested event records who asked again).
    return { kind: 'renewed', approval: await this.renew(trx, work, row, operation, policy, askedBy.id) };
  }

  async refuseExpiredGrant(trx: Db, work: UnitOfWork, operation: GatedOperation): Promise<DomainError | null> {
    const row = await this.lockApproval(trx, operation);
    if (row.state === 'approved' && inForce(row, this.deps.clock.now())) return null;
    // The holder must not send. In this same transaction the operation goes back to awaiting a
    // new approval (recorded), so the caller commits that and then answers approval_expired.
    await this.renew(trx, work, row, operation, null);
    return new DomainError('approval_expired', 'the grant expired before the write was sent: do not send it; retry the claim to request a new approval', { approval_id: row.id });
  }

  async expireIfRunOut(trx: Db, operation: GatedOperation): Promise<boolean> {
    const row = await this.lockApproval(trx, operation);
    if (row.state === 'denied' || inForce(row, this.deps.clock.now())) return false;
    // Recorded once: the expiry sweeper (a request) or an earlier claim may have recorded it already.
    if (row.state !== 'expired') await this.expire(trx, row, operation);
    return true;
  }

  /**
   * Marks an approval expired (recording it once) and makes a new pending request for the same
   * command, requested by `requestedBy` (the first request's principal unless a claim asked again).
   */
  async renew(
    trx: Db, work: UnitOfWork, row: ApprovalRow, operation: OperationFacts, policy: ApprovalPolicy | null, requestedBy = row.requested_by,
  ): Promise<ApprovalView> {
    if (row.state !== 'expired') await this.expire(trx, row, operation);
    const request = await readRequestPayload(trx, this.deps.ledger, row);
    const renewedPolicy = policy ?? {
      approvers: Number(row.approvers_required),
      ttl_seconds: Number(row.grant_ttl_seconds),
      request_ttl_seconds: Math.round((Number(row.expires_at) - Date.parse(row.requested_at)) / 1000),
    };
    // The expiry moved the operation back to awaiting_approval; create points it at the new request.
    return this.create(trx, work, operation, requestedBy, renewedPolicy, request.summary, request.command);
  }

  /**
   * Records that an approval ran out (request or grant), as the service's doing (actor null)
   * whoever's request noticed it. The operation then awaits a new approval.
   */
  async expire(trx: Db, row: ApprovalRow, operation: OperationFacts): Promise<void> {
    await trx.updateTable('approvals').set({ state: 'expired' }).where('id', '=', row.id).where('account_id', '=', row.account_id).execute();
    await this.deps.operations.transition(trx, operation, 'approval_expired', { actor: null, payload: { approval_id: row.id, was: row.state } });
  }

  private async create(
    trx: Db, work: UnitOfWork, operation: OperationFacts, requestedBy: string, policy: ApprovalPolicy, summary: OperationSummary | null, command: JsonValue,
  ): Promise<ApprovalView> {
    const now = this.deps.clock.now();
    const id = newId('apr');
    const event = await this.deps.ledger.append(trx, {
      ...eventFacts(operation), type: 'approval_requested', actor: requestedBy, state: 'awaiting_approval',
      payload: { approval_id: id, summary: summary as JsonValue, command },
    });
    const row: ApprovalRow = {
      id, account_id: operation.account_id, operation_id: operation.id, fingerprint: operation.fingerprint, state: 'pending',
      approvers_required: policy.approvers, requested_by: requestedBy, requested_at: rfc3339(now),
      expires_at: now + policy.request_ttl_seconds * 1000, grant_ttl_seconds: policy.ttl_seconds, request_seq: event.seq,
      grant: null, grant_expires_at: null, decided_at: null,
    };
    await trx.insertInto('approvals').values(row).execute();
    // The operation points at its current approval (a no-op when the claim inserts the operation afterwards).
    await this.deps.operations.pointAtApproval(trx, operation, id);
    await this.notify(trx, work, row);
    return buildView(row, operation, { summary, command }, [], now);
  }

  private async lockApproval(trx: Db, operation: GatedOperation): Promise<ApprovalRow> {
    const approvalId = operation.approval_id ?? (await trx.selectFrom('operations').select('approval_id')
      .where('account_id', '=', operation.account_id).where('id', '=', operation.id).executeTakeFirst())?.approval_id;
    const row = approvalId ? await this.deps.store.forUpdate(trx.selectFrom('approvals').selectAll()
      .where('account_id', '=', operation.account_id).where('id', '=', approvalId)).executeTakeFirst() : undefined;
    if (!row) throw new InvariantError(`operation ${operation.id} needs approval but has none`);
    return row;
  }
}

/** A request still open for decisions, or a grant still valid for a lease: what lets an operation go on without asking again. */
function inForce(row: ApprovalRow, now: number): boolean {
  if (row.state === 'pending') return Number(row.expires_at) > now;
  if (row.state === 'approved') return Number(row.grant_expires_at) > now;
  return false;
}

/** The operation columns every approval event header carries. */
export function eventFacts(op: OperationFacts) {
  return {
    account_id: op.account_id, operation_id: op.id, idempotency_key: op.idempotency_key, fingerprint: op.fingerprint,
    agent_run_id: op.agent_run_id, method: op.method, route: op.route,
  };
}
