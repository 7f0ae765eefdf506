import type { Principal } from '../principals/roles.js';
import type { JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';
import type { ResolveOperationBody } from '../core/request-bodies.js';
import { transactOrRefuse, type Refusal } from '../store/refusals.js';
import { operationJson, type OperationJson } from './operation-json.js';
import { lockOperation } from './operation-rows.js';
import { applyTransition, expireIfDue, transitionAllowed } from './transitions.js';
import { notFound } from './reports.js';
import type { OperationDeps } from './claim-types.js';
import type { WorkScope } from '../store/work-scope.js';

/** An admin's resolution (schema/requests/resolve-operation.json). */
export type ResolveBody = ResolveOperationBody;

/**
 * An admin settles an `unknown` operation with the evidence a reconciler found
 * downstream (docs/retry-contract.md, unknown and resolve). The note and response go into the `resolved`
 * event's encrypted payload; later retries replay that response.
 */
export async function resolveOperation(
  deps: OperationDeps, principal: Principal, accountId: string, id: string, body: ResolveBody, workScope?: WorkScope,
): Promise<OperationJson> {
  return transactOrRefuse(deps.store, async (trx): Promise<OperationJson | Refusal> => {
    const nowMs = deps.clock.now();
    const locked = await lockOperation(deps.store, trx, accountId, id);
    if (!locked) return { refusal: notFound(id) };
    const row = await expireIfDue(trx, deps.ledger, locked, nowMs);
    if (!transitionAllowed('resolved', row.state)) {
      return { refusal: new DomainError('invalid_transition', `only an unknown operation can be resolved; this one is ${row.state}`, { state: row.state }) };
    }
    const response = body.response ?? null;
    const provider_ref = body.provider_ref ?? row.provider_ref;
    const settled = await applyTransition(trx, deps.ledger, row, 'resolved', {
      actor: principal.id, nowMs, to: body.state, set: { provider_ref, response_status: response?.status ?? null },
      payload: { note: body.note, provider_ref: body.provider_ref ?? null, response } as unknown as JsonValue,
      // Later retries replay the response the admin found downstream.
      responseInEvent: response !== null,
    });
    return operationJson(trx, deps.ledger, settled);
  }, { account: accountId, scope: workScope });
}
