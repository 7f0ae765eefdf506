import { EVENT_HEADER, EVENT_HEADER_FIELDS, type EventHeader, pushHeaderRow, ROW, ROW_HASH, ROW_PAYLOAD, rowHasHeaderTypes, toEventHeader, withoutAccountId } from './event-shape.js';
import { canonicalize } from './jcs.js';
import type { JsonObject } from './json.js';
import { sha256Digest } from './merkle.js';
import { asciiHeaderHash, asciiHeaderHashOfAccountCheckedHex } from './ascii-header-hash.js';

const DOMAIN = 'gatehouse:event:v1\n';

/** What JCS (and JSON.stringify) would escape, plus any surrogate (JCS refuses lone ones). */
const NEEDS_CARE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/**
 * The header's members in JCS order (RFC 8785 §3.2.3: by UTF-16 code units, which for these
 * ASCII names is JavaScript's default sort), each with its row position, the text written
 * before its value and whether it is a number.
 */
const JCS_ORDER = [...EVENT_HEADER_FIELDS].sort();
const JCS_POSITION = JCS_ORDER.map((f) => ROW[f]);
const JCS_PREFIX = JCS_ORDER.map((f, k) => (k === 0 ? '{"' : ',"') + f + '":');
const JCS_NUMERIC = JCS_ORDER.map((f) => EVENT_HEADER[f] === 'seq' || EVENT_HEADER[f] === 'int?');

/**
 * JCS(header) over exactly the EVENT_HEADER_FIELDS. A fast path for verify's ~1M headers (about
 * twice as fast as canonicalize): the members are written in their fixed code-unit order, and a
 * string that JCS would write verbatim between quotes is written so. Any header with a value
 * that JCS escapes or refuses (a quote, a backslash, a control character, a surrogate) or a
 * value not of its field's kind goes through canonicalize() itself; integers print the
 * same in both. test/core/crypto/event-hash.test.ts checks the two agree. Field values must
 * have their declared types (the chain verifier checks that before hashing).
 */
export function canonicalHeader(h: EventHeader): string {
  // The row fast path assumes the declared types, so only headers that have them take it.
  const row: unknown[] = [];
  pushHeaderRow(row, h);
  if (rowHasHeaderTypes(row)) {
    const fast = canonicalHeaderFromRow(row);
    if (fast !== null) return fast;
  }
  return canonicalize(toEventHeader(h) as unknown as JsonObject);
}

/**
 * The fast path of canonicalHeader over a row (EVENT_ROW_COLUMNS order, event-shape.ts),
 * without building a header object: each member's name and value written in JCS order, a
 * string between quotes as it is. Returns null when the row needs the full JCS (a value JCS
 * escapes or refuses) — the caller then takes the header path, which also reports wrong types.
 * The caller must have checked the types (rowHasHeaderTypes). Measured against the same
 * concatenation written out by hand: no difference outside the noise once the hash is included.
 */
export function canonicalHeaderFromRow(r: readonly unknown[]): string | null {
  let out = '';
  let strings = '';
  for (let k = 0; k < JCS_PREFIX.length; k++) {
    const v = r[JCS_POSITION[k]!];
    if (v === null) {
      out += JCS_PREFIX[k] + 'null';
    } else if (JCS_NUMERIC[k]) {
      out += JCS_PREFIX[k] + String(v);
    } else {
      strings += v as string;
      out += JCS_PREFIX[k] + '"' + (v as string) + '"';
    }
  }
  // One test over every string at once: a single regex run per row.
  return NEEDS_CARE.test(strings) ? null : out + '}';
}

/** SHA-256("gatehouse:event:v1\n" + canonical header string), lowercase hex. */
export function hashCanonicalHeader(canonical: string): string {
  return sha256Digest('sha256', DOMAIN + canonical, 'hex');
}

/** SHA-256("gatehouse:event:v1\n" + JCS(header)), lowercase hex. Hashes exactly EVENT_HEADER_FIELDS. */
export function eventHash(header: EventHeader): string {
  return hashCanonicalHeader(canonicalHeader(header));
}

/**
 * The event hash of a row (EVENT_ROW_COLUMNS order), or null when a value is not of its
 * field's kind (rowHasHeaderTypes) or the header needs the full JCS: the reference path then
 * names what is wrong. Plain ASCII headers, nearly all of them, are hashed from bytes
 * (ascii-header-hash.ts, which checks the types as it writes); the rest from the string.
 */
export function rowHeaderHash(r: readonly unknown[]): string | null {
  const ascii = asciiHeaderHash(r);
  if (ascii !== null) return ascii;
  if (!rowHasHeaderTypes(r)) return null;
  const canonical = canonicalHeaderFromRow(r);
  return canonical === null ? null : hashCanonicalHeader(canonical);
}

const SEQ = ROW.seq, ACCOUNT_ID = ROW.account_id, PREV_HASH = ROW.prev_hash, PAYLOAD_HASH = ROW.payload_hash;

/**
 * The verifier's fast path over one row (EVENT_ROW_COLUMNS order: the header fields, then hash
 * and payload): right types, the expected seq, account and link, the header hashes to the
 * stored hash, the payload matches payload_hash and, when `opens` is given (the master key and
 * the account's data key are known), opens. Returns the row's hash when every check passes,
 * else null: the row must then go through ChainVerifier.addEvent, which makes the same checks
 * and names the failure. Shared by ChainVerifier.addRow and the worker threads that check
 * slices of a large log (src/verify/sqlite-slice-worker.ts), so both accept exactly the same rows.
 */
export function checkEventRow(
  r: readonly unknown[], expectedSeq: number, prevHash: string, accountId: string,
  opens: ((seq: number, payload: Uint8Array) => boolean) | null,
): string | null {
  const hash = checkedRowHash(r, expectedSeq, prevHash, accountId);
  if (hash === null) return null;
  const payload = r[ROW_PAYLOAD];
  const payloadHash = r[PAYLOAD_HASH];
  if (payload === null || payload === undefined) return payloadHash === null ? hash : null;
  if (!(payload instanceof Uint8Array) || payloadHash === null || sha256Digest('sha256', payload, 'hex') !== payloadHash) return null;
  return opens === null || opens(expectedSeq, payload) ? hash : null;
}

/** The row's hash when its seq, account, link and header hash are as expected (checkEventRow's first half), else null. */
function checkedRowHash(r: readonly unknown[], expectedSeq: number, prevHash: string, accountId: string): string | null {
  if (r[SEQ] !== expectedSeq || r[ACCOUNT_ID] !== accountId || r[PREV_HASH] !== prevHash) return null;
  const hash = r[ROW_HASH];
  // rowHeaderHash checks the header's types; equal to a SHA-256 output, so 64 lowercase hex digits
  if (typeof hash !== 'string' || rowHeaderHash(r) !== hash) return null;
  return hash;
}

/**
 * The payload column as SQL that hands a BLOB over as hex text: better-sqlite3 builds a Buffer
 * for every BLOB it returns (an ArrayBuffer with its own allocation, freed by the garbage
 * collector), a string costs much less. NULL stays NULL and any other type comes back as '-',
 * which is no hex, so checkEventRowHexPayload refuses it exactly where checkEventRow refuses a
 * payload that is not a BLOB. SQLite writes an empty BLOB as '' (a payload of 0 bytes, as the
 * empty Buffer better-sqlite3 returns for it).
 */
export const PAYLOAD_AS_HEX = "CASE typeof(payload) WHEN 'blob' THEN hex(payload) WHEN 'null' THEN NULL ELSE '-' END";

let payloadScratch = Buffer.alloc(64 * 1024);

/**
 * checkEventRow over a row whose payload column was read as PAYLOAD_AS_HEX: the same checks on
 * the same bytes, so it accepts exactly the rows checkEventRow accepts when read with the BLOB
 * column. For the parallel verify's slices, which never judge a refused row themselves (the
 * reference path re-reads it with the BLOB).
 */
export function checkEventRowHexPayload(
  r: readonly unknown[], expectedSeq: number, prevHash: string, accountId: string,
  opens: ((seq: number, payload: Uint8Array) => boolean) | null,
): string | null {
  const hash = checkedRowHash(r, expectedSeq, prevHash, accountId);
  if (hash === null) return null;
  return payloadChecked(hash, r[ROW_PAYLOAD], r[PAYLOAD_HASH], expectedSeq, opens);
}

/** checkEventRowHexPayload's second half: the payload (hex text, PAYLOAD_AS_HEX) against payload_hash and, with `opens`, the data key. */
function payloadChecked(
  hash: string, hex: unknown, payloadHash: unknown, expectedSeq: number, opens: ((seq: number, payload: Uint8Array) => boolean) | null,
): string | null {
  if (hex === null || hex === undefined) return payloadHash === null ? hash : null;
  if (typeof hex !== 'string' || hex.length % 2 !== 0 || payloadHash === null) return null;
  const size = hex.length / 2;
  if (size > payloadScratch.length) payloadScratch = Buffer.alloc(size);
  // Buffer#write stops at the first character that is not a hex digit: all of it or refuse.
  if (payloadScratch.write(hex, 0, size, 'hex') !== size) return null;
  const payload = payloadScratch.subarray(0, size);
  if (sha256Digest('sha256', payload, 'hex') !== payloadHash) return null;
  return opens === null || opens(expectedSeq, payload) ? hash : null;
}

/** Positions in a row read without its account_id column (EVENT_ROW_COLUMNS less account_id). */
const A_SEQ = withoutAccountId(SEQ), A_PREV_HASH = withoutAccountId(PREV_HASH), A_PAYLOAD_HASH = withoutAccountId(PAYLOAD_HASH);
const A_HASH = withoutAccountId(ROW_HASH), A_PAYLOAD = withoutAccountId(ROW_PAYLOAD);

/**
 * checkEventRowHexPayload over a row read without its account_id column, for the parallel
 * verify's slices: one column fewer is one string fewer and, on Node 20, keeps better-sqlite3's
 * raw row within the 17 elements of the array's first backing store (it grows it at the 18th).
 * The query must have established that the row's account_id is exactly `accountId` — a TEXT
 * value equal to it byte for byte (src/verify/columns.ts EVENT_COLUMNS_OF_ACCOUNT) — which is
 * what checkEventRowHexPayload's `r[account_id] === accountId` checks. `prevHash` must be 64
 * lowercase hex digits (a hash the caller computed, or checked): the row's prev_hash equals it.
 * The same checks on the same values otherwise, the payload's first: payload_hash is then null
 * or the payload's digest, so neither hash is tested again character by character in the
 * header (asciiHeaderHashOfAccountCheckedHex). A header that writer declines goes through
 * checkEventRowHexPayload on the full row.
 */
export function checkEventRowOfAccountHexPayload(
  r: readonly unknown[], expectedSeq: number, prevHash: string, accountId: string,
  opens: ((seq: number, payload: Uint8Array) => boolean) | null,
): string | null {
  if (r[A_SEQ] !== expectedSeq || r[A_PREV_HASH] !== prevHash) return null;
  const hash = r[A_HASH];
  if (typeof hash !== 'string') return null;
  // The payload first (either order refuses the same rows): payload_hash is known hex after it.
  if (payloadChecked(hash, r[A_PAYLOAD], r[A_PAYLOAD_HASH], expectedSeq, opens) === null) return null;
  const computed = asciiHeaderHashOfAccountCheckedHex(r, accountId);
  if (computed === null) {
    // Not plain ASCII (or a wrong type): the full row through the general check.
    const full = [...r.slice(0, ACCOUNT_ID), accountId, ...r.slice(ACCOUNT_ID)];
    return checkEventRowHexPayload(full, expectedSeq, prevHash, accountId, opens);
  }
  return computed === hash ? hash : null;
}
