/**
 * The event hash of a row whose header is plain printable ASCII, without building a string.
 *
 * Why: verify hashes ~1M headers, and building the canonical header as a JavaScript string
 * (≈ 50 concatenations, then flattening and UTF-8 encoding it for the hash) cost about twice
 * the SHA-256 itself. Here the same bytes are written straight into one reused buffer: the
 * fixed text between values (the domain, braces, member names) is precomputed, each value is
 * copied character by character, and the buffer is hashed once.
 *
 * What it hashes is exactly what hashCanonicalHeader(canonicalHeaderFromRow(r)) hashes, or it
 * declines: a string value is copied only while every character is in 0x20–0x7e and is not a
 * quote or a backslash — characters JCS writes verbatim and UTF-8 encodes as the one byte of
 * their code — so the bytes equal the UTF-8 of that canonical string. Any other character
 * (escapes, non-ASCII, surrogates), or a value too long for the buffer, returns null and the
 * caller takes the string path, which handles them all. Numbers are written as String(v), as
 * the string path writes them. test/core/crypto/event-hash.test.ts checks the two agree.
 *
 * It also makes rowHasHeaderTypes' checks as it goes (each value of its field's kind, the
 * payload hash 64 lowercase hex digits), declining a row that fails one: one pass instead of
 * two. The caller's string path checks the types itself.
 */
import { EVENT_HEADER, EVENT_HEADER_FIELDS, ROW, withoutAccountId } from './event-shape.js';
import { sha256Digest } from './merkle.js';

const DOMAIN = 'gatehouse:event:v1\n';

/** Members in JCS order (RFC 8785: by code unit; these names are ASCII), as in event-hash.ts. */
const JCS_ORDER = [...EVENT_HEADER_FIELDS].sort();
const POSITION = JCS_ORDER.map((f) => ROW[f]);

/**
 * Each member's kind as a small integer: compared per member per row, a number costs less
 * than a string comparison. HEX is this file's own kind (asciiHeaderHashOfAccountCheckedHex).
 */
const TEXT_OR_NULL = 0, TEXT = 1, INT_OR_NULL = 2, SEQ = 3, HEX64_OR_NULL = 4, HEX = 5;
const KIND_CODE = { 'text?': TEXT_OR_NULL, text: TEXT, 'int?': INT_OR_NULL, seq: SEQ, 'hex64?': HEX64_OR_NULL } as const;
const KIND = Int8Array.from(JCS_ORDER, (f) => KIND_CODE[EVENT_HEADER[f]]);
/** The bytes written before each value: the domain and `{"` for the first, `,"` after, the name, `":`. */
const PREFIX = JCS_ORDER.map((f, k) => Buffer.from((k === 0 ? DOMAIN + '{"' : ',"') + f + '":', 'latin1'));

/** Large enough for any header the ledger writes; a longer one takes the string path. */
const CAPACITY = 16 * 1024;
/** A Buffer, for its native latin-1 write: text known to be ASCII is copied in one call, not character by character. */
const out = Buffer.alloc(CAPACITY);

const QUOTE = 0x22, BACKSLASH = 0x5c, CLOSE_BRACE = 0x7d;
const NULL_TEXT = [0x6e, 0x75, 0x6c, 0x6c]; // "null"

/**
 * Copy `s` into `out` at `at` if every character is one JCS writes verbatim as one byte;
 * returns the new end, or -1 (nothing usable written) otherwise.
 */
function copyPlain(s: string, at: number): number {
  if (at + s.length + 1 > CAPACITY) return -1; // + the closing quote or brace
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) return -1;
    out[at++] = c;
  }
  return at;
}

/** Whether `s` is 64 lowercase hex digits (the 'hex64?' kind), without a regex. */
function isHex64(s: string): boolean {
  if (s.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/**
 * SHA-256("gatehouse:event:v1\n" + JCS(header)) in lowercase hex for a row (EVENT_ROW_COLUMNS
 * order) whose values have the header's types (rowHasHeaderTypes) and are plain printable
 * ASCII; null when some value is not (the caller then checks the types and uses
 * canonicalHeaderFromRow).
 */
export function asciiHeaderHash(r: readonly unknown[]): string | null {
  return asciiHeaderHashAt(r, POSITION, null, KIND);
}

/** Member k's position in a row read without the account_id column, -1 for account_id, whose value is then given. */
const POSITION_WITHOUT_ACCOUNT = POSITION.map(withoutAccountId);

/**
 * The kinds as the slices' check knows them (asciiHeaderHashOfAccountCheckedHex): prev_hash
 * and payload_hash already known to be 64 lowercase hex digits (payload_hash or null), so
 * copied without a test per character.
 */
const KIND_CHECKED_HEX = KIND.map((kind, k) => (JCS_ORDER[k] === 'prev_hash' || JCS_ORDER[k] === 'payload_hash' ? HEX : kind));

/**
 * asciiHeaderHash over a row without its account_id column (the other header fields in
 * EVENT_ROW_COLUMNS order), the account's id given: the same bytes as asciiHeaderHash over the
 * full row whose account_id is `accountId`.
 */
export function asciiHeaderHashOfAccount(r: readonly unknown[], accountId: string): string | null {
  return asciiHeaderHashAt(r, POSITION_WITHOUT_ACCOUNT, accountId, KIND);
}

/**
 * asciiHeaderHashOfAccount for a row whose prev_hash is 64 lowercase hex digits and whose
 * payload_hash is null or 64 lowercase hex digits, as the caller has established (the slices'
 * check: prev_hash equals a hash it computed or checked, payload_hash the payload's digest).
 * Those 128 characters are then copied as they are: the bytes are the same as
 * asciiHeaderHashOfAccount's, for ~1/3 fewer characters tested (BENCHMARKS.md, eighth session).
 */
export function asciiHeaderHashOfAccountCheckedHex(r: readonly unknown[], accountId: string): string | null {
  return asciiHeaderHashAt(r, POSITION_WITHOUT_ACCOUNT, accountId, KIND_CHECKED_HEX);
}

/**
 * The account whose start of header (the domain, then `{"account_id":"…"`) `out` holds now, and
 * where it ends: a run of rows of one account writes it once, not once per row. Any write of
 * another start (another account, or a full row's own account_id) forgets it first.
 */
let startAccount: string | null = null;
let startEnd = 0;

function asciiHeaderHashAt(
  r: readonly unknown[], position: readonly number[], accountId: string | null, kinds: Int8Array,
): string | null {
  let at = 0;
  let k = 0;
  if (accountId !== null && accountId === startAccount) {
    // Member 0 in JCS order is account_id: already in place.
    at = startEnd;
    k = 1;
  } else {
    startAccount = null;
  }
  for (; k < PREFIX.length; k++) {
    const prefix = PREFIX[k]!;
    if (at + prefix.length + 4 > CAPACITY) return null;
    for (let i = 0; i < prefix.length; i++) out[at++] = prefix[i]!;
    const p = position[k]!;
    const v = p < 0 ? accountId : r[p];
    const kind = kinds[k]!;
    if (v === null && kind !== SEQ && kind !== TEXT) {
      for (let i = 0; i < 4; i++) out[at++] = NULL_TEXT[i]!;
    } else if (kind === SEQ || kind === INT_OR_NULL) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || (kind === SEQ && v < 1)) return null;
      // A safe integer's decimal form: at most 17 ASCII characters ('-' and digits).
      if (at + 18 > CAPACITY) return null;
      at += out.write(String(v), at, 'latin1');
    } else if (kind === HEX) {
      // Known hex (the caller's word); its length is checked all the same, as cheaply as that.
      // One native copy: in a character loop these 128 characters per row were a fifth of the
      // function's instructions (callgrind, BENCHMARKS.md thirty-seventh session).
      if (typeof v !== 'string' || v.length !== 64 || at + 66 > CAPACITY) return null;
      out[at++] = QUOTE;
      at += out.write(v, at, 'latin1');
      out[at++] = QUOTE;
    } else {
      if (typeof v !== 'string' || (kind === HEX64_OR_NULL && !isHex64(v))) return null;
      out[at++] = QUOTE;
      at = copyPlain(v, at);
      if (at < 0) return null;
      out[at++] = QUOTE;
    }
    if (k === 0 && accountId !== null) {
      startAccount = accountId;
      startEnd = at;
    }
  }
  if (at + 1 > CAPACITY) return null;
  out[at++] = CLOSE_BRACE;
  return sha256Digest('sha256', out.subarray(0, at), 'hex');
}
