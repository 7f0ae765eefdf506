/**
 * The events columns every database reader selects, in this order: the header fields in
 * contract order, then hash and payload (ChainVerifier.addRow's row, rowEvent its slow path).
 * Rows are read as arrays (no per-row column-name objects).
 */
export const EVENT_COLUMNS =
  'seq, account_id, ts, type, operation_id, idempotency_key, fingerprint, actor, agent_run_id, ' +
  'method, route, state, provider_ref, response_status, payload_hash, prev_hash, hash, payload';
