import { canonicalize } from './jcs.js';
import type { JsonObject } from './json.js';
import { sha256Digest } from './merkle.js';

/** The hashed part of an event (docs/formats.md#events). Absent values are null, never omitted. */
export interface EventHeader {
  seq: number;
  account_id: string;
  ts: string;
  type: string;
  operation_id: string | null;
  idempotency_key: string | null;
  fingerprint: string | null;
  actor: string | null;
  agent_run_id: string | null;
  method: string | null;
  route: string | null;
  state: string | null;
  provider_ref: string | null;
  response_status: number | null;
  payload_hash: string | null;
  prev_hash: string;
}

/** Every header field, in contract order, for readers that rebuild a header from columns. */
export const EVENT_HEADER_FIELDS = [
  'seq',
  'account_id',
  'ts',
  'type',
  'operation_id',
  'idempotency_key',
  'fingerprint',
  'actor',
  'agent_run_id',
  'method',
  'route',
  'state',
  'provider_ref',
  'response_status',
  'payload_hash',
  'prev_hash',
] as const satisfies ReadonlyArray<keyof EventHeader>;

/** prev_hash of seq 1. */
export const GENESIS_PREV_HASH = '0'.repeat(64);

const DOMAIN = 'gatehouse:event:v1\n';

function isSafeIntOrNull(v: unknown): boolean {
  return v === null || (typeof v === 'number' && Number.isSafeInteger(v));
}

/** What JCS (and JSON.stringify) would escape, plus any surrogate (JCS refuses lone ones). */
const NEEDS_CARE = /[\u0000-\u001f"\\\ud800-\udfff]/;

function q(v: string | null): string {
  return v === null ? 'null' : '"' + v + '"';
}

/**
 * JCS(header) over exactly the EVENT_HEADER_FIELDS. A fast path for verify's ~1M headers (about
 * twice as fast as canonicalize): the members are written in their fixed code-unit order, and a
 * string that JCS would write verbatim between quotes is written so. Any header with a value
 * that JCS escapes or refuses (a quote, a backslash, a control character, a surrogate) or a
 * number that is not a safe integer goes through canonicalize() itself; integers print the
 * same in both. test/core/crypto/event-hash.test.ts checks the two agree. Field values must
 * have their declared types (the chain verifier checks that before hashing).
 */
export function canonicalHeader(h: EventHeader): string {
  // The row fast path assumes the declared types, so only headers that have them take it.
  if (
    Number.isSafeInteger(h.seq) && isSafeIntOrNull(h.response_status) &&
    typeof h.account_id === 'string' && typeof h.ts === 'string' && typeof h.type === 'string' && typeof h.prev_hash === 'string'
  ) {
    const fast = canonicalHeaderFromRow(EVENT_HEADER_FIELDS.map((f) => h[f]));
    if (fast !== null) return fast;
  }
  const only: Record<string, unknown> = {};
  for (const f of EVENT_HEADER_FIELDS) only[f] = h[f];
  return canonicalize(only as JsonObject);
}

/**
 * The fast path of canonicalHeader over a database row (columns in contract order, see
 * src/verify/columns.ts: seq, account_id, ts, type, operation_id, idempotency_key, fingerprint,
 * actor, agent_run_id, method, route, state, provider_ref, response_status, payload_hash,
 * prev_hash), without building a header object. Returns null when the row needs the full JCS
 * (a value JCS escapes or refuses) — the caller then takes the header path, which also
 * reports wrong types. The caller must have checked the types: seq a safe integer,
 * response_status a safe integer or null, account_id/ts/type/prev_hash strings, the others
 * strings or null.
 */
export function canonicalHeaderFromRow(r: readonly unknown[]): string | null {
  const account_id = r[1] as string, ts = r[2] as string, type = r[3] as string;
  const operation_id = r[4] as string | null, idempotency_key = r[5] as string | null, fingerprint = r[6] as string | null;
  const actor = r[7] as string | null, agent_run_id = r[8] as string | null, method = r[9] as string | null;
  const route = r[10] as string | null, state = r[11] as string | null, provider_ref = r[12] as string | null;
  const response_status = r[13] as number | null, payload_hash = r[14] as string | null, prev_hash = r[15] as string;
  if (
    NEEDS_CARE.test(
      '' + account_id + actor + agent_run_id + fingerprint + idempotency_key + method + operation_id +
        payload_hash + prev_hash + provider_ref + route + state + ts + type,
    )
  ) {
    return null;
  }
  return (
    '{"account_id":"' + account_id +
    '","actor":' + q(actor) +
    ',"agent_run_id":' + q(agent_run_id) +
    ',"fingerprint":' + q(fingerprint) +
    ',"idempotency_key":' + q(idempotency_key) +
    ',"method":' + q(method) +
    ',"operation_id":' + q(operation_id) +
    ',"payload_hash":' + q(payload_hash) +
    ',"prev_hash":"' + prev_hash +
    '","provider_ref":' + q(provider_ref) +
    ',"response_status":' + (response_status === null ? 'null' : '' + response_status) +
    ',"route":' + q(route) +
    ',"seq":' + r[0] +
    ',"state":' + q(state) +
    ',"ts":"' + ts +
    '","type":"' + type +
    '"}'
  );
}

/** SHA-256("gatehouse:event:v1\n" + canonical header string), lowercase hex. */
export function hashCanonicalHeader(canonical: string): string {
  return sha256Digest('sha256', DOMAIN + canonical, 'hex');
}

/** SHA-256("gatehouse:event:v1\n" + JCS(header)), lowercase hex. Hashes exactly EVENT_HEADER_FIELDS. */
export function eventHash(header: EventHeader): string {
  return hashCanonicalHeader(canonicalHeader(header));
}

/** The event hash as 32 raw bytes. */
export function eventHashBytes(header: EventHeader): Buffer {
  return sha256Digest('sha256', DOMAIN + canonicalHeader(header), 'buffer');
}

function isNullableString(v: unknown): boolean {
  return v === null || typeof v === 'string';
}

/**
 * The verifier's fast path over one database row (columns in contract order as for
 * canonicalHeaderFromRow, then hash and payload): right types, the expected seq, account and
 * link, the header hashes to the stored hash, the payload matches payload_hash and, when
 * `opens` is given (the master key and the account's data key are known), opens. Returns the
 * row's hash when every check passes, else null: the row must then go through
 * ChainVerifier.addEvent, which makes the same checks and names the failure. Shared by
 * ChainVerifier.addRow and the worker threads that check slices of a large log
 * (src/verify/sqlite-slice-worker.ts), so both accept exactly the same rows.
 */
export function checkEventRow(
  r: readonly unknown[], expectedSeq: number, prevHash: string, accountId: string,
  opens: ((seq: number, payload: Uint8Array) => boolean) | null,
): string | null {
  const seq = r[0];
  if (seq !== expectedSeq || r[1] !== accountId || r[15] !== prevHash) return null;
  const rs = r[13];
  if (
    !(typeof r[2] === 'string' && typeof r[3] === 'string' &&
      isNullableString(r[4]) && isNullableString(r[5]) && isNullableString(r[6]) && isNullableString(r[7]) &&
      isNullableString(r[8]) && isNullableString(r[9]) && isNullableString(r[10]) && isNullableString(r[11]) &&
      isNullableString(r[12]) && isNullableString(r[14]) &&
      (rs === null || (typeof rs === 'number' && Number.isSafeInteger(rs))))
  ) {
    return null;
  }
  const canonical = canonicalHeaderFromRow(r);
  const hash = r[16];
  // equal to a SHA-256 output, so 64 lowercase hex digits
  if (canonical === null || typeof hash !== 'string' || hashCanonicalHeader(canonical) !== hash) return null;
  const payload = r[17];
  const payloadHash = r[14];
  if (payload === null || payload === undefined) return payloadHash === null ? hash : null;
  if (!(payload instanceof Uint8Array) || payloadHash === null || sha256Digest('sha256', payload, 'hex') !== payloadHash) return null;
  return opens === null || opens(expectedSeq, payload) ? hash : null;
}
