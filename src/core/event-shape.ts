/**
 * The shape of an event header as the verifier receives it from untrusted input (a database
 * row or an export line): exactly the contract's 16 fields with their types (docs/formats.md#events).
 */
import { EVENT_HEADER_FIELDS } from './event-hash.js';

export const HEX64 = /^[0-9a-f]{64}$/;
const NULLABLE_STRING_FIELDS = EVENT_HEADER_FIELDS.filter((f) => f !== 'seq' && f !== 'response_status' && f !== 'account_id' && f !== 'ts' && f !== 'type' && f !== 'prev_hash');

export function isPositiveInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
}

const FIELD_COUNT = EVENT_HEADER_FIELDS.length;

function isNullableString(v: unknown): boolean {
  return v === null || typeof v === 'string';
}

/** Why a header is not an EventHeader of exactly the contract's fields, or null. */
export function headerProblem(header: unknown): string | null {
  if (header === null || typeof header !== 'object' || Array.isArray(header)) return 'not an object';
  const h = header as Record<string, unknown>;
  // Fast path: the right types for all 16 fields and 16 own keys means exactly these fields.
  if (
    isPositiveInt(h.seq) &&
    typeof h.account_id === 'string' &&
    typeof h.ts === 'string' &&
    typeof h.type === 'string' &&
    isNullableString(h.operation_id) &&
    isNullableString(h.idempotency_key) &&
    isNullableString(h.fingerprint) &&
    isNullableString(h.actor) &&
    isNullableString(h.agent_run_id) &&
    isNullableString(h.method) &&
    isNullableString(h.route) &&
    isNullableString(h.state) &&
    isNullableString(h.provider_ref) &&
    (h.response_status === null || (typeof h.response_status === 'number' && Number.isSafeInteger(h.response_status))) &&
    (h.payload_hash === null || (typeof h.payload_hash === 'string' && HEX64.test(h.payload_hash))) &&
    typeof h.prev_hash === 'string' &&
    Object.keys(h).length === FIELD_COUNT &&
    Object.hasOwn(h, 'seq') // no inherited fields
  ) {
    return null;
  }
  for (const k of Object.keys(h)) {
    if (!(EVENT_HEADER_FIELDS as readonly string[]).includes(k)) return `unexpected field ${JSON.stringify(k)}`;
  }
  for (const f of EVENT_HEADER_FIELDS) if (!Object.hasOwn(h, f)) return `missing field ${f}`;
  if (!isPositiveInt(h.seq)) return 'seq is not a positive integer';
  for (const f of ['account_id', 'ts', 'type', 'prev_hash'] as const) if (typeof h[f] !== 'string') return `${f} is not a string`;
  if (h.response_status !== null && !(typeof h.response_status === 'number' && Number.isSafeInteger(h.response_status))) {
    return 'response_status is not an integer or null';
  }
  for (const f of NULLABLE_STRING_FIELDS) if (!isNullableString(h[f])) return `${f} is not a string or null`;
  return 'payload_hash is not 64 lowercase hex digits or null';
}
