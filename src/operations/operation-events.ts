import type { EventInput, EventType } from '../ledger/event-input.js';
import type { JsonValue } from '../core/json.js';
import type { OperationRow } from './operation-json.js';

/** Who asked, as the timeline shows it: the request's own key, fingerprint and agent run. */
export interface Asker {
  actor: string | null;
  idempotency_key: string;
  fingerprint: string;
  agent_run_id: string | null;
  method: string;
  route: string;
}

/** An event about a change of the operation itself: the header describes the operation after the change. */
export function changeEvent(row: OperationRow, type: EventType, actor: string | null, payload?: JsonValue): EventInput {
  return {
    account_id: row.account_id,
    type,
    actor,
    operation_id: row.id,
    idempotency_key: row.idempotency_key,
    fingerprint: row.fingerprint,
    agent_run_id: row.agent_run_id,
    method: row.method,
    route: row.route,
    state: row.state,
    provider_ref: row.provider_ref,
    response_status: row.response_status,
    ...(payload === undefined ? {} : { payload }),
  };
}

/**
 * An event about a claim call answered from an existing operation (retried,
 * replayed, conflicted, reused, scope_busy): the header names the operation and
 * its state, but the key, fingerprint and agent run of the request that came in,
 * so incident review sees who asked with what.
 */
export function askedEvent(row: OperationRow, type: EventType, asker: Asker): EventInput {
  return {
    ...changeEvent(row, type, asker.actor),
    idempotency_key: asker.idempotency_key,
    fingerprint: asker.fingerprint,
    agent_run_id: asker.agent_run_id,
    method: asker.method,
    route: asker.route,
  };
}
