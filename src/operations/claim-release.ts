import { issueLease } from './lease.js';
import { changeEvent } from './operation-events.js';
import { operationJson, type OperationRow } from './operation-json.js';
import { updateOperation } from './operation-rows.js';
import { takeScope } from './scope-holds.js';
import { answerAwaitingApproval } from './claim-approval.js';
import { mayLeaseAgain } from './states.js';
import type { ClaimResult, ClaimScope } from './claim-types.js';

/**
 * A retry of a `canceled` operation with the same key and fingerprint (docs/retry-contract.md): the write
 * was never made, so the key is not burnt. The operation takes a new lease (`leased`), exactly
 * as a new key would have; the reports of the old lease are forgotten, since they described a
 * lease that no longer exists and the old token was fenced off when the operation ended.
 *
 * This is the only way out of a terminal state, and only out of `canceled`: `succeeded`,
 * `failed` and `denied` stay final.
 */
export async function leaseCanceled(scope: ClaimScope, row: OperationRow): Promise<ClaimResult> {
  const { deps, trx, request, nowMs } = scope;
  if (!mayLeaseAgain(row.state)) throw new Error(`operation ${row.id} is ${row.state}, not canceled`);
  if (row.exclusive_scope !== null) {
    // The hold was given back when the operation ended; another operation may have taken it since.
    await trx.deleteFrom('scope_holds').where('account_id', '=', row.account_id).where('operation_id', '=', row.id).execute();
    const busy = await takeScope({ ...scope, request: { ...request, exclusiveScope: row.exclusive_scope } }, row.id);
    if (busy) return busy;
  }
  await trx.deleteFrom('operation_reports').where('operation_id', '=', row.id).execute();
  // The old response (a resolve may have stored one) described a write that was not made.
  const cleared = { ...row, response_seq: null, response_status: null };
  if (row.approval_id !== null) {
    // An approved write still needs a grant that is valid now: the approval rows of the table decide
    // (a grant still valid → `approved` with it; one that ran out → a new pending approval).
    const reopened = await updateOperation(trx, cleared, { state: 'approved', response_seq: null, response_status: null }, nowMs);
    return answerAwaitingApproval(scope, reopened);
  }
  const issued = issueLease(nowMs, request.leaseSeconds);
  const leased = await updateOperation(trx, cleared, {
    state: 'running', lease_seconds: request.leaseSeconds, lease_token_hash: issued.tokenHash, lease_expires_at: issued.expiresAtMs,
    response_seq: null, response_status: null,
  }, nowMs);
  await deps.ledger.append(trx, { ...changeEvent(leased, 'leased', request.principal.id), agent_run_id: request.agentRunId ?? leased.agent_run_id });
  return { answer: { outcome: 'created', execute: true, operation: await operationJson(trx, deps.ledger, leased), lease: issued.lease } };
}
