import type { Principal } from '../principals/roles.js';
import type { JsonValue } from '../core/json.js';
import { DomainError, InvariantError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { canonicalize } from '../core/jcs.js';
import type { Db } from '../store/store.js';
import { leaseTokenMatches } from './lease.js';
import { changeEvent } from './operation-events.js';
import { operationJson, type OperationJson, type OperationRow } from './operation-json.js';
import { expireIfDue, lockOperation, releaseScope, updateOperation } from './operation-rows.js';
import { gatedOperation } from './claim-approval.js';
import { reportAllowed } from './states.js';
import { reportData, type ReportBody } from './report-types.js';
import type { OperationDeps } from './claim-types.js';

type ReportResult = { operation: OperationJson } | { refusal: DomainError };

/**
 * A lease holder's report (docs/retry-contract.md#states-and-allowed-reports). The lease token is checked first, so a
 * zombie whose lease ran out or was superseded cannot move what it no longer
 * owns. A report identical to one already accepted answers as the first did and
 * records nothing. Refusals are returned, not thrown, so an expiry noticed here
 * (`lease_expired`) still commits.
 */
export async function reportEvent(
  deps: OperationDeps, principal: Principal, accountId: string, id: string, body: ReportBody,
): Promise<OperationJson> {
  const result = await deps.store.transact(async (trx): Promise<ReportResult> => {
    const nowMs = deps.clock.now();
    const locked = await lockOperation(deps.store, trx, accountId, id);
    if (!locked) return { refusal: notFound(id) };
    const row = await expireIfDue(trx, deps.ledger, locked, nowMs);
    if (!leaseTokenMatches(body.lease_token, row.lease_token_hash)) return { refusal: leaseLost(row.id) };
    // The lease ran out before a terminal report: whatever the holder says now, it no longer owns the operation.
    if (row.state === 'unknown') return { refusal: leaseLost(row.id) };
    if (body.type === 'heartbeat') return heartbeat(deps, trx, row, nowMs);
    const digest = sha256Hex(canonicalize(reportData(body)));
    if (await alreadyReported(trx, row.id, digest)) return { operation: await operationJson(trx, deps.ledger, row) };
    if (!reportAllowed(body.type, row.state)) {
      return { refusal: new DomainError('invalid_transition', `a "${body.type}" report is not allowed while the operation is ${row.state}`, { state: row.state }) };
    }
    if (body.type === 'sent' && row.approval_id !== null) {
      const refusal = await gatedOrUnavailable(deps).refuseExpiredGrant(trx, gatedOperation(row));
      if (refusal) return { refusal };
    }
    const changed = await applyReport(deps, trx, principal, row, body, nowMs);
    await trx.insertInto('operation_reports').values({ operation_id: row.id, digest, account_id: row.account_id, type: body.type }).execute();
    return { operation: await operationJson(trx, deps.ledger, changed) };
  });
  if ('refusal' in result) throw result.refusal;
  return result.operation;
}

async function heartbeat(deps: OperationDeps, trx: Db, row: OperationRow, nowMs: number): Promise<ReportResult> {
  if (!reportAllowed('heartbeat', row.state)) {
    return { refusal: new DomainError('invalid_transition', `a heartbeat is not allowed while the operation is ${row.state}`, { state: row.state }) };
  }
  // A heartbeat extends the lease and records nothing (docs/formats.md, Event types).
  const extended = await updateOperation(trx, row, { lease_expires_at: nowMs + row.lease_seconds * 1000 }, nowMs);
  return { operation: await operationJson(trx, deps.ledger, extended) };
}

async function alreadyReported(trx: Db, operationId: string, digest: string): Promise<boolean> {
  const found = await trx.selectFrom('operation_reports').select('digest')
    .where('operation_id', '=', operationId).where('digest', '=', digest).executeTakeFirst();
  return found !== undefined;
}

/** One state change and its one event, in the caller's transaction. */
async function applyReport(
  deps: OperationDeps, trx: Db, principal: Principal, row: OperationRow, body: Exclude<ReportBody, { type: 'heartbeat' }>, nowMs: number,
): Promise<OperationRow> {
  switch (body.type) {
    case 'sent': {
      const sent = await updateOperation(trx, row, { state: 'sent' }, nowMs);
      await deps.ledger.append(trx, changeEvent(sent, 'sent', principal.id));
      return sent;
    }
    case 'accepted': {
      const accepted = await updateOperation(trx, row, { state: 'accepted', provider_ref: body.provider_ref }, nowMs);
      await deps.ledger.append(trx, changeEvent(accepted, 'accepted', principal.id));
      return accepted;
    }
    case 'completed': {
      const done = { ...row, state: body.outcome, response_status: body.response.status };
      // The response is sensitive: it lives only in the event's encrypted payload; the row points at its seq.
      const event = await deps.ledger.append(trx, changeEvent(done, 'completed', principal.id, { outcome: body.outcome, response: body.response as unknown as JsonValue }));
      await releaseScope(trx, row);
      return updateOperation(trx, row, { state: body.outcome, response_status: body.response.status, response_seq: event.seq }, nowMs);
    }
    case 'canceled': {
      const canceled = await updateOperation(trx, row, { state: 'canceled' }, nowMs);
      await deps.ledger.append(trx, changeEvent(canceled, 'canceled', principal.id));
      await releaseScope(trx, row);
      return canceled;
    }
    default:
      throw new InvariantError('unexpected report type');
  }
}

function gatedOrUnavailable(deps: OperationDeps) {
  if (!deps.approvals) throw new DomainError('unavailable', 'approvals are not available on this server; retry the report later');
  return deps.approvals;
}

export function notFound(id: string): DomainError {
  return new DomainError('not_found', `no operation ${id}`);
}

function leaseLost(id: string): DomainError {
  return new DomainError('lease_lost', `the lease on operation ${id} was lost (expired, superseded or not this one); stop and do not send the write`, {
    operation_id: id,
  });
}
