import type { Selectable } from 'kysely';
import type { OperationsTable } from '../../schema/database.js';
import type { OperationJson, OperationState, StoredResponse } from '../core/wire.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Db, UnitOfWork } from '../store/store.js';
import type { JsonValue } from '../core/json.js';
import { isTerminal } from './states.js';
import { InvariantError } from '../core/errors.js';

export type { OperationJson, StoredResponse };

export type OperationRow = Selectable<OperationsTable>;

/** With `work`, the unit `trx` belongs to, the stored response is kept decrypted once it commits (Ledger.readPayload). */
export async function operationJson(trx: Db, ledger: Ledger, row: OperationRow, work?: UnitOfWork): Promise<OperationJson> {
  const json = operationFields(row);
  if (isTerminal(row.state)) json.response = await storedResponse(trx, ledger, row, work);
  return json;
}

/** The JSON of a row not finished yet (a claim's new operation): it has no response to read, so nothing is awaited. */
export function unfinishedOperationJson(row: OperationRow): OperationJson {
  if (isTerminal(row.state)) throw new InvariantError(`operation ${row.id} is ${row.state}: its JSON carries a stored response`);
  return operationFields(row);
}

/**
 * The JSON of a terminal row whose stored response the caller holds already, because it has just
 * sealed it into the event the row points at: nothing is read back or decrypted. `response` must
 * be what `storedResponse` would read (null when the account's payloads are no longer sealed).
 */
export function terminalOperationJson(row: OperationRow, response: StoredResponse | null): OperationJson {
  const json = operationFields(row);
  json.response = response;
  return json;
}

/**
 * A page of operations of one account: the stored responses are read and decrypted in one
 * query for the whole page, not one round trip per operation.
 */
export async function operationsJson(db: Db, ledger: Ledger, accountId: string, rows: OperationRow[]): Promise<OperationJson[]> {
  const seqs = rows.filter((row) => isTerminal(row.state) && row.response_seq !== null).map((row) => Number(row.response_seq));
  const payloads = seqs.length === 0 ? new Map<number, JsonValue | null>() : await ledger.readPayloads(db, accountId, seqs);
  return rows.map((row) => {
    const json = operationFields(row);
    if (isTerminal(row.state)) json.response = row.response_seq === null ? null : responseOf(payloads.get(Number(row.response_seq)) ?? null);
    return json;
  });
}

/** Every member but the response. */
function operationFields(row: OperationRow): OperationJson {
  return {
    id: row.id,
    account_id: row.account_id,
    idempotency_key: row.idempotency_key,
    fingerprint: row.fingerprint,
    method: row.method,
    route: row.route,
    // The column only ever holds states this code wrote.
    state: row.state as OperationState,
    business_key: row.business_key,
    exclusive_scope: row.exclusive_scope,
    agent_run_id: row.agent_run_id,
    provider_ref: row.provider_ref,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * The response lives only in an event payload (encrypted): the `completed`
 * event's payload is `{outcome, response}`, the `resolved` one's `{note, response, …}`.
 * Null when there is none (canceled, denied) or the account's data key was shredded.
 */
export async function storedResponse(trx: Db, ledger: Ledger, row: OperationRow, work?: UnitOfWork): Promise<StoredResponse | null> {
  if (row.response_seq === null) return null;
  return responseOf(await ledger.readPayload(trx, row.account_id, row.response_seq, work));
}

function responseOf(payload: JsonValue | null): StoredResponse | null {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return null;
  const response = payload.response;
  return response && typeof response === 'object' && !Array.isArray(response) ? (response as unknown as StoredResponse) : null;
}
