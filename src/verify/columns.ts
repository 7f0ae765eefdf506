import type { EventHeader } from '../core/event-hash.js';
import type { VerifierEvent } from '../core/chain-verifier.js';

/**
 * The events columns every database reader selects, in this order: the header fields in
 * contract order, then hash and payload. Rows are read as arrays (no per-row column-name
 * objects) and turned into the verifier's event here.
 */
export const EVENT_COLUMNS =
  'seq, account_id, ts, type, operation_id, idempotency_key, fingerprint, actor, agent_run_id, ' +
  'method, route, state, provider_ref, response_status, payload_hash, prev_hash, hash, payload';

export function eventFromRow(r: unknown[]): VerifierEvent {
  const header = {
    seq: r[0], account_id: r[1], ts: r[2], type: r[3], operation_id: r[4], idempotency_key: r[5],
    fingerprint: r[6], actor: r[7], agent_run_id: r[8], method: r[9], route: r[10], state: r[11],
    provider_ref: r[12], response_status: r[13], payload_hash: r[14], prev_hash: r[15],
  } as EventHeader;
  return { header, hash: r[16] as string, payload: (r[17] as Uint8Array | null) ?? null };
}
