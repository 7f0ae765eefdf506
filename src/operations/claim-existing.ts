import { DomainError, InvariantError } from '../core/errors.js';
import { retryAfterSeconds } from './lease.js';
import { askedEvent } from './operation-events.js';
import { operationJson, type OperationRow } from './operation-json.js';
import { expireIfDue } from './transitions.js';
import { askerOf, type ClaimResult, type ClaimScope } from './claim-types.js';
import { answerAwaitingApproval } from './claim-approval.js';
import { leaseCanceled } from './claim-release.js';
import { retakeScope } from './scope-holds.js';

/**
 * The key was claimed before (docs/retry-contract.md, the claim outcome table): decide from the locked row.
 * An expired lease turns the operation `unknown` first, in this transaction,
 * so a retry never re-executes a write that may have happened.
 */
export async function answerExisting(scope: ClaimScope, locked: OperationRow): Promise<ClaimResult> {
  const { deps, trx, work, request, nowMs } = scope;
  const row = await expireIfDue(trx, deps.ledger, locked, nowMs);
  const asker = askerOf(request);
  if (row.fingerprint !== request.fingerprint) {
    await deps.ledger.append(trx, askedEvent(row, 'conflicted', asker));
    // Only the id and state: nothing of the stored command or response reaches a caller who sent other content.
    return {
      refusal: new DomainError('fingerprint_mismatch', 'this idempotency key was used for a different request; use a new key for a new request', {
        operation_id: row.id, state: row.state,
      }),
    };
  }
  switch (row.state) {
    case 'awaiting_approval':
    case 'approved': {
      // Its approval may have run out and another operation taken its scope over (scope-holds.ts):
      // it takes the scope back before it asks for a new approval, or it is refused and asks nothing.
      const busy = row.exclusive_scope === null ? null : await retakeScope(scope, row);
      return busy ?? answerAwaitingApproval(scope, row);
    }
    case 'running':
    case 'sent':
    case 'accepted':
      await deps.ledger.append(trx, askedEvent(row, 'retried', asker));
      return {
        answer: {
          outcome: 'in_progress', execute: false, operation: await operationJson(trx, deps.ledger, row),
          retryAfterSeconds: retryAfterSeconds(row.lease_expires_at, nowMs),
        },
      };
    case 'canceled':
      return leaseCanceled(scope, row);
    case 'succeeded':
    case 'failed': {
      await deps.ledger.append(trx, askedEvent(row, 'replayed', asker));
      // Replays of one operation come in runs (an agent retrying): its row is kept, and its
      // response kept opened, once this transaction commits.
      const { knownKeys } = scope;
      if (knownKeys) work.afterCommit(() => knownKeys.rememberFinished(row));
      const operation = await operationJson(trx, deps.ledger, row, work);
      return { answer: { outcome: 'replayed', execute: false, operation, response: operation.response ?? null } };
    }
    case 'denied':
      // Its approval says who denied it: the answer carries it, as approval_required's does.
      if (row.approval_id !== null) return answerAwaitingApproval(scope, row);
      await deps.ledger.append(trx, askedEvent(row, 'retried', asker));
      return { answer: { outcome: row.state, execute: false, operation: await operationJson(trx, deps.ledger, row) } };
    case 'unknown':
      await deps.ledger.append(trx, askedEvent(row, 'retried', asker));
      return { answer: { outcome: row.state, execute: false, operation: await operationJson(trx, deps.ledger, row) } };
    default:
      throw new InvariantError(`operation ${row.id} is in the unknown state "${row.state}"`);
  }
}

/** A new key whose business key the account already used: the existing operation answers, and nothing new is made. */
export async function answerReused(scope: ClaimScope, holder: OperationRow): Promise<ClaimResult> {
  const { deps, trx, work, nowMs } = scope;
  const row = await expireIfDue(trx, deps.ledger, holder, nowMs);
  await deps.ledger.append(trx, askedEvent(row, 'reused', askerOf(scope.request)));
  const operation = await operationJson(trx, deps.ledger, row, work);
  return { answer: { outcome: 'reused', execute: false, operation, ...('response' in operation ? { response: operation.response } : {}) } };
}
