import { type VerifierEvent, rowEvent } from '../core/chain-verifier.js';

/**
 * The events columns every database reader selects, in this order: the header fields in
 * contract order, then hash and payload. Rows are read as arrays (no per-row column-name
 * objects) and turned into the verifier's event here.
 */
export const EVENT_COLUMNS =
  'seq, account_id, ts, type, operation_id, idempotency_key, fingerprint, actor, agent_run_id, ' +
  'method, route, state, provider_ref, response_status, payload_hash, prev_hash, hash, payload';

/** A row in EVENT_COLUMNS order as the verifier's event (the slow path; ChainVerifier.addRow is the fast one). */
export const eventFromRow: (r: unknown[]) => VerifierEvent = rowEvent;
