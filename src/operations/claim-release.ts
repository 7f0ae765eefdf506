import { issueLease } from './lease.js';
import { operationJson, type OperationRow } from './operation-json.js';
import { retakeScope } from './scope-holds.js';
import { answerAwaitingApproval } from './claim-approval.js';
import { applyTransition } from './transitions.js';
import type { ClaimResult, ClaimScope } from './claim-types.js';

/**
 * A retry of a `canceled` operation with the same key and fingerprint (docs/retry-contract.md): the write
 * was never made, so the key is not burnt. The operation takes a new lease (`leased`), exactly
 * as a new key would have; the reports of the old lease are forgotten, since they described a
 * lease that no longer exists and the old token was fenced off when the operation ended.
 * `succeeded`, `failed` and `denied` stay final (the transitions table allows only `canceled`).
 */
export async function leaseCanceled(scope: ClaimScope, row: OperationRow): Promise<ClaimResult> {
  const { deps, trx, request, nowMs } = scope;
  if (row.exclusive_scope !== null) {
    // The hold was given back when the operation ended; another operation may have taken it since.
    const busy = await retakeScope(scope, row);
    if (busy) return busy;
  }
  await trx.deleteFrom('operation_reports').where('operation_id', '=', row.id).execute();
  // The old response (a resolve may have stored one) described a write that was not made.
  const forgotten = { response_seq: null, response_status: null };
  if (row.approval_id !== null) {
    // An approved write still needs a grant that is valid now: the approval rows of the table decide
    // (a grant still valid → `approved` with it; one that ran out → a new pending approval).
    const reopened = await applyTransition(trx, deps.ledger, row, 'reopened', { actor: request.principal.id, nowMs, set: forgotten });
    return answerAwaitingApproval(scope, reopened);
  }
  const lease = issueLease(nowMs, request.leaseSeconds);
  const leased = await applyTransition(trx, deps.ledger, row, 'leased_again', {
    actor: request.principal.id, nowMs, lease, set: { ...forgotten, lease_seconds: request.leaseSeconds }, agentRunId: request.agentRunId,
  });
  return { answer: { outcome: 'created', execute: true, operation: await operationJson(trx, deps.ledger, leased), lease: lease.lease } };
}
