/**
 * One event as the verifier's reference path (ChainVerifier.addEvent) takes it: from an export
 * line, or from a database row the fast path (checkEventRow) did not accept. Untrusted: the
 * fields have their declared types only once headerProblem() said so.
 */
import type { EventHeader } from './event-hash.js';

export interface VerifierEvent {
  header: EventHeader;
  /** The stored hash, lowercase hex. */
  hash: string;
  /** The stored (sealed) payload bytes, nonce included. */
  payload: Uint8Array | null;
}

/** A row in EVENT_COLUMNS order (src/verify/columns.ts) as the verifier's event (the slow path; no check here). */
export function rowEvent(r: readonly unknown[]): VerifierEvent {
  const header = {
    seq: r[0], account_id: r[1], ts: r[2], type: r[3], operation_id: r[4], idempotency_key: r[5],
    fingerprint: r[6], actor: r[7], agent_run_id: r[8], method: r[9], route: r[10], state: r[11],
    provider_ref: r[12], response_status: r[13], payload_hash: r[14], prev_hash: r[15],
  } as EventHeader;
  return { header, hash: r[16] as string, payload: (r[17] as Uint8Array | null | undefined) ?? null };
}
