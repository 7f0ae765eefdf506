/**
 * One event as the verifier's reference path (ChainVerifier.addEvent) takes it: from an export
 * line, or from a database row the fast path (checkEventRow) did not accept. Untrusted: the
 * fields have their declared types only once headerProblem() said so.
 */
import { type EventHeader, headerOfRow, ROW_HASH, ROW_PAYLOAD } from './event-shape.js';

export interface VerifierEvent {
  header: EventHeader;
  /** The stored hash, lowercase hex. */
  hash: string;
  /** The stored (sealed) payload bytes, nonce included. */
  payload: Uint8Array | null;
}

/** A row in EVENT_ROW_COLUMNS order as the verifier's event (the slow path; no check here). */
export function rowEvent(r: readonly unknown[]): VerifierEvent {
  return { header: headerOfRow(r), hash: r[ROW_HASH] as string, payload: (r[ROW_PAYLOAD] as Uint8Array | null | undefined) ?? null };
}
