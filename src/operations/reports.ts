import type { Principal } from '../principals/roles.js';
import type { JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { canonicalize } from '../core/jcs.js';
import type { Db } from '../store/store.js';
import { leaseTokenMatches } from './lease.js';
import { transactOrRefuse, type Refusal } from '../store/refusals.js';
import { compiledOnce, firstRow } from '../store/compiled-statement.js';
import { operationJson, terminalOperationJson, type OperationJson } from './operation-json.js';
import { lockOperation } from './operation-rows.js';
import { applyTransition, expireIfDue, transitionAllowed, type TransitionInput } from './transitions.js';
import { gatedOperation } from './claim-approval.js';
import { reportData, type ReportBody } from './report-types.js';
import type { OperationDeps } from './claim-types.js';
import type { WorkScope } from '../store/work-scope.js';

type ReportResult = OperationJson | Refusal;

/**
 * A lease holder's report (docs/retry-contract.md#states-and-allowed-reports). The lease token is checked first, so a
 * zombie whose lease ran out or was superseded cannot move what it no longer
 * owns. A report identical to one already accepted answers as the first did and
 * records nothing. Refusals are returned, not thrown, so an expiry noticed here
 * (`lease_expired`) still commits.
 */
export async function reportEvent(
  deps: OperationDeps, principal: Principal, accountId: string, id: string, body: ReportBody, workScope?: WorkScope,
): Promise<OperationJson> {
  return transactOrRefuse(deps.store, async (trx, work): Promise<ReportResult> => {
    const nowMs = deps.clock.now();
    const locked = await lockOperation(deps.store, trx, accountId, id);
    if (!locked) return { refusal: notFound(id) };
    const row = await expireIfDue(trx, deps.ledger, locked, nowMs);
    if (!leaseTokenMatches(body.lease_token, row.lease_token_hash)) return { refusal: leaseLost(row.id) };
    // The lease ran out before a terminal report: whatever the holder says now, it no longer owns the operation.
    if (row.state === 'unknown') return { refusal: leaseLost(row.id) };
    if (body.type === 'heartbeat') {
      if (!transitionAllowed('heartbeat', row.state)) {
        return { refusal: new DomainError('invalid_transition', `a heartbeat is not allowed while the operation is ${row.state}`, { state: row.state }) };
      }
      // A heartbeat extends the lease and records nothing (docs/formats.md, Event types).
      return operationJson(trx, deps.ledger, await applyTransition(trx, deps.ledger, row, 'heartbeat', { actor: principal.id, nowMs }));
    }
    const digest = sha256Hex(canonicalize(reportData(body)));
    if (await alreadyReported(trx, row.id, digest)) return operationJson(trx, deps.ledger, row);
    if (!transitionAllowed(body.type, row.state)) {
      return { refusal: new DomainError('invalid_transition', `a "${body.type}" report is not allowed while the operation is ${row.state}`, { state: row.state }) };
    }
    if (body.type === 'sent' && row.approval_id !== null) {
      const refusal = await gatedOrUnavailable(deps).refuseExpiredGrant(trx, work, gatedOperation(row));
      if (refusal) return { refusal };
    }
    const changed = await applyTransition(trx, deps.ledger, row, body.type, reportInput(principal, body, nowMs));
    await insertReport(trx, { operation_id: row.id, digest, account_id: row.account_id, type: body.type });
    if (body.type !== 'completed') return operationJson(trx, deps.ledger, changed);
    // The response was just sealed into the event the row now points at: answered from the report,
    // not read back and decrypted. A shredded account's events carry no payload: then, as a read, null.
    return terminalOperationJson(changed, (await deps.ledger.sealsPayloads(trx, row.account_id)) ? body.response : null);
  }, { account: accountId, scope: workScope });
}

async function alreadyReported(trx: Db, operationId: string, digest: string): Promise<boolean> {
  return firstRow(await selectReport(trx, { operationId, digest })) !== undefined;
}

// Every report but a heartbeat runs both: compiled once (compiled-statement.ts).
const selectReport = compiledOnce(
  (db, { operationId, digest }: { operationId: string; digest: string }) => db.selectFrom('operation_reports').select('digest')
    .where('operation_id', '=', operationId).where('digest', '=', digest),
  ({ operationId, digest }) => [operationId, digest],
);

const insertReport = compiledOnce(
  (db, report: { operation_id: string; digest: string; account_id: string; type: string }) => db.insertInto('operation_reports').values(report),
  (report) => [report.operation_id, report.digest, report.account_id, report.type],
);

/**
 * What each report sets besides the state; the transition table says the rest. Literals, not
 * `{ ...input, set }`: spreading an object and adding members it lacks costs V8 microseconds
 * per member (event-shape.ts, newEventHeader).
 */
function reportInput(principal: Principal, body: Exclude<ReportBody, { type: 'heartbeat' }>, nowMs: number): TransitionInput {
  const actor = principal.id;
  switch (body.type) {
    case 'accepted':
      return { actor, nowMs, set: { provider_ref: body.provider_ref } };
    case 'completed':
      // The response is sensitive: it lives only in the event's encrypted payload; the row points at its seq.
      return {
        actor, nowMs, to: body.outcome, set: { response_status: body.response.status }, responseInEvent: true,
        payload: { outcome: body.outcome, response: body.response as unknown as JsonValue },
      };
    default:
      return { actor, nowMs };
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
