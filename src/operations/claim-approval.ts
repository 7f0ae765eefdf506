import type { ApprovalGate, GatedOperation } from '../approvals/seam.js';
import { DomainError, InvariantError } from '../core/errors.js';
import { APPROVAL_DEFAULTS } from '../policies/config-schema.js';
import { issueLease } from './lease.js';
import { askedEvent } from './operation-events.js';
import { operationJson, type OperationRow } from './operation-json.js';
import { lockOperation } from './operation-rows.js';
import { applyTransition } from './transitions.js';
import { askerOf, type ClaimResult, type ClaimScope } from './claim-types.js';

/** Without an approvals domain a claim that needs approval must not run: refuse rather than execute unapproved. */
export function gateOrRefusal(gate: ApprovalGate | undefined): { gate: ApprovalGate } | { refusal: DomainError } {
  if (gate) return { gate };
  return { refusal: new DomainError('unavailable', 'approvals are not available on this server; retry later with the same idempotency key') };
}

export function gatedOperation(row: OperationRow): GatedOperation {
  return {
    id: row.id, account_id: row.account_id, idempotency_key: row.idempotency_key, fingerprint: row.fingerprint,
    method: row.method, route: row.route, agent_run_id: row.agent_run_id, approval_id: row.approval_id,
  };
}

/**
 * Whether an operation in the way of a claim can go on only with a new approval: its request ran
 * out undecided, or its grant ran out before a lease was taken. Such an operation holds its scope
 * against nobody (scope-holds.ts); its expiry, when not recorded yet, is recorded now. Without an
 * approvals domain this cannot be told, and the hold stands.
 */
export async function approvalRanOut(scope: ClaimScope, row: OperationRow): Promise<boolean> {
  const gate = scope.deps.approvals;
  if (!gate || (row.state !== 'awaiting_approval' && row.state !== 'approved')) return false;
  return gate.expireIfRunOut(scope.trx, gatedOperation(row));
}

/**
 * A new operation whose policy needs approval: the approvals domain creates the
 * pending request (and records `approval_requested`) in this transaction.
 */
export async function requestApproval(scope: ClaimScope, gate: ApprovalGate, row: OperationRow): Promise<ClaimResult> {
  const { deps, trx, work, request } = scope;
  const approval = await gate.request(trx, work, {
    operation: gatedOperation(row),
    requestedBy: request.principal,
    policy: request.policy.approval ?? APPROVAL_DEFAULTS,
    summary: request.summary,
    command: request.command,
  });
  // The approvals domain pointed the row at its approval (through the OperationPort).
  const pointed = { ...row, approval_id: approval.id };
  return { answer: { outcome: 'approval_required', execute: false, operation: await operationJson(trx, deps.ledger, pointed), approval } };
}

/** A retry of an operation awaiting approval, approved and not leased yet, or denied (the approval rows of docs/retry-contract.md's outcome table). */
export async function answerAwaitingApproval(scope: ClaimScope, row: OperationRow): Promise<ClaimResult> {
  const { deps, trx, work, request, nowMs } = scope;
  const gated = gateOrRefusal(deps.approvals);
  if ('refusal' in gated) return gated;
  const standing = await gated.gate.standing(trx, work, gatedOperation(row), request.policy.approval ?? APPROVAL_DEFAULTS, request.principal);
  const asker = askerOf(request);
  switch (standing.kind) {
    case 'pending':
      await deps.ledger.append(trx, askedEvent(row, 'retried', asker));
      return { answer: { outcome: 'approval_required', execute: false, operation: await operationJson(trx, deps.ledger, row), approval: standing.approval } };
    case 'denied':
      await deps.ledger.append(trx, askedEvent(row, 'retried', asker));
      return { answer: { outcome: 'denied', execute: false, operation: await operationJson(trx, deps.ledger, row), approval: standing.approval } };
    case 'renewed': {
      // The approvals domain recorded the expiry and the new request and set the operation waiting again: read it as it is now.
      const renewed = await lockOperation(deps.store, trx, row.account_id, row.id);
      return { answer: { outcome: 'approval_required', execute: false, operation: await operationJson(trx, deps.ledger, renewed!), approval: standing.approval } };
    }
    case 'granted': {
      const issued = issueLease(nowMs, row.lease_seconds);
      const leased = await applyTransition(trx, deps.ledger, row, 'leased', {
        actor: request.principal.id, nowMs, lease: issued, agentRunId: request.agentRunId,
      });
      return {
        answer: {
          outcome: 'approved', execute: true, operation: await operationJson(trx, deps.ledger, leased), lease: issued.lease, grant: standing.grant,
        },
      };
    }
    default:
      throw new InvariantError('unexpected approval standing');
  }
}
