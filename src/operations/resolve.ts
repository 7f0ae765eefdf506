import type { Principal } from '../principals/roles.js';
import type { JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';
import type { ResolveOperationBody } from '../core/request-bodies.js';
import { changeEvent } from './operation-events.js';
import { operationJson, type OperationJson } from './operation-json.js';
import { expireIfDue, lockOperation, releaseScope, updateOperation } from './operation-rows.js';
import { notFound } from './reports.js';
import type { OperationDeps } from './claim-types.js';

/** The body of `POST /v1/operations/{id}/resolve` (schema/requests/resolve-operation.json). */
export type ResolveBody = ResolveOperationBody;

/**
 * An admin settles an `unknown` operation with the evidence a reconciler found
 * downstream (docs/retry-contract.md, unknown and resolve). The note and response go into the `resolved`
 * event's encrypted payload; later retries replay that response.
 */
export async function resolveOperation(
  deps: OperationDeps, principal: Principal, accountId: string, id: string, body: ResolveBody,
): Promise<OperationJson> {
  const result = await deps.store.transact(async (trx): Promise<{ operation: OperationJson } | { refusal: DomainError }> => {
    const nowMs = deps.clock.now();
    const locked = await lockOperation(deps.store, trx, accountId, id);
    if (!locked) return { refusal: notFound(id) };
    const row = await expireIfDue(trx, deps.ledger, locked, nowMs);
    if (row.state !== 'unknown') {
      return { refusal: new DomainError('invalid_transition', `only an unknown operation can be resolved; this one is ${row.state}`, { state: row.state }) };
    }
    const response = body.response ?? null;
    const settled = {
      ...row, state: body.state, provider_ref: body.provider_ref ?? row.provider_ref, response_status: response?.status ?? null,
    };
    const payload = { note: body.note, provider_ref: body.provider_ref ?? null, response } as unknown as JsonValue;
    const event = await deps.ledger.append(trx, changeEvent(settled, 'resolved', principal.id, payload));
    await releaseScope(trx, row);
    const updated = await updateOperation(trx, row, {
      state: settled.state,
      provider_ref: settled.provider_ref,
      response_status: settled.response_status,
      response_seq: response ? event.seq : null,
      // Fences off the worker that lost the lease: it can no longer report anything on this operation.
      lease_token_hash: null,
    }, nowMs);
    return { operation: await operationJson(trx, deps.ledger, updated) };
  });
  if ('refusal' in result) throw result.refusal;
  return result.operation;
}
