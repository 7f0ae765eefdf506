/**
 * The event header (docs/formats.md#events): its 16 fields, their order
 * and their types, written once. Everything that reads or writes a header derives from
 * EVENT_HEADER: the EventHeader type, the field list, a row's column order and positions
 * (storage, export, the verify readers, the timeline), the hash's JCS fast path
 * (event-hash.ts) and the checks of untrusted headers (headerProblem). Two writers on every
 * append's path spell the fields out for speed (toEventHeader, pushHeaderRow); tsc and
 * test/core/event-shape.test.ts hold them to this list.
 */

/**
 * Field → kind, in contract order (object keys keep insertion order). `seq` is a positive safe
 * integer; `text` a string; `text?` a string or null; `int?` a safe integer or null; `hex64?`
 * 64 lowercase hex digits or null.
 */
export const EVENT_HEADER = {
  seq: 'seq',
  account_id: 'text',
  ts: 'text',
  type: 'text',
  operation_id: 'text?',
  idempotency_key: 'text?',
  fingerprint: 'text?',
  actor: 'text?',
  agent_run_id: 'text?',
  method: 'text?',
  route: 'text?',
  state: 'text?',
  provider_ref: 'text?',
  response_status: 'int?',
  payload_hash: 'hex64?',
  prev_hash: 'text',
} as const;

type FieldKind = (typeof EVENT_HEADER)[keyof typeof EVENT_HEADER];
interface KindType { seq: number; text: string; 'text?': string | null; 'int?': number | null; 'hex64?': string | null }

export type EventHeaderField = keyof typeof EVENT_HEADER;

/** The hashed part of an event. Absent values are null, never omitted. */
export type EventHeader = { -readonly [F in EventHeaderField]: KindType[(typeof EVENT_HEADER)[F]] };

type NullableField = { [F in EventHeaderField]: null extends EventHeader[F] ? F : never }[EventHeaderField];

/** A header's values with the nullable ones optional (absent = null), e.g. what an append is given. */
export type EventHeaderValues = Omit<EventHeader, NullableField> & Partial<Pick<EventHeader, NullableField>>;

/** Every header field, in contract order. */
export const EVENT_HEADER_FIELDS = Object.freeze(Object.keys(EVENT_HEADER)) as readonly EventHeaderField[];

const KINDS: readonly FieldKind[] = EVENT_HEADER_FIELDS.map((f) => EVENT_HEADER[f]);

/**
 * An event as a row (readers select rows as arrays, no per-row objects): the header fields in
 * contract order, then the stored hash and the sealed payload.
 */
export const EVENT_ROW_COLUMNS = Object.freeze([...EVENT_HEADER_FIELDS, 'hash', 'payload'] as const);

/** Each field's position in a row. */
export const ROW = Object.freeze(Object.fromEntries(EVENT_HEADER_FIELDS.map((f, i) => [f, i]))) as Readonly<Record<EventHeaderField, number>>;
export const ROW_HASH = EVENT_HEADER_FIELDS.length;
export const ROW_PAYLOAD = EVENT_HEADER_FIELDS.length + 1;

/**
 * A row position (ROW, ROW_HASH, ROW_PAYLOAD) in a row read without its account_id column (the
 * parallel verify's slices, src/verify/columns.ts EVENT_COLUMNS_OF_ACCOUNT); -1 for account_id.
 */
export function withoutAccountId(position: number): number {
  return position === ROW.account_id ? -1 : position > ROW.account_id ? position - 1 : position;
}

/** prev_hash of seq 1. */
export const GENESIS_PREV_HASH = '0'.repeat(64);

/**
 * Exactly the header fields of `values`, in contract order, an absent nullable field as null:
 * the one conversion from a stored row, an append's input or a parsed header to an EventHeader.
 *
 * This and pushHeaderRow write the fields out rather than loop over EVENT_HEADER_FIELDS: every
 * append runs them, and a loop's `header[f]` loads and stores go megamorphic in V8 (~8,000 and
 * ~4,000 instructions per claim, bench/claim-instructions.ts). tsc holds the literal to the
 * fields (`satisfies`); test/core/event-shape.test.ts holds both orders to EVENT_HEADER's.
 */
export function toEventHeader(values: EventHeaderValues): EventHeader {
  const v = values as Partial<EventHeader>;
  return {
    seq: v.seq ?? null,
    account_id: v.account_id ?? null,
    ts: v.ts ?? null,
    type: v.type ?? null,
    operation_id: v.operation_id ?? null,
    idempotency_key: v.idempotency_key ?? null,
    fingerprint: v.fingerprint ?? null,
    actor: v.actor ?? null,
    agent_run_id: v.agent_run_id ?? null,
    method: v.method ?? null,
    route: v.route ?? null,
    state: v.state ?? null,
    provider_ref: v.provider_ref ?? null,
    response_status: v.response_status ?? null,
    payload_hash: v.payload_hash ?? null,
    prev_hash: v.prev_hash ?? null,
  } satisfies Record<EventHeaderField, unknown> as EventHeader;
}

/** Appends the header's values to `row` in contract order (a row's first columns, EVENT_ROW_COLUMNS). */
export function pushHeaderRow(row: unknown[], h: EventHeader): void {
  row.push(
    h.seq, h.account_id, h.ts, h.type, h.operation_id, h.idempotency_key, h.fingerprint, h.actor,
    h.agent_run_id, h.method, h.route, h.state, h.provider_ref, h.response_status, h.payload_hash, h.prev_hash,
  );
}

/** The header of a row in EVENT_ROW_COLUMNS order, unchecked (the verifier's slow path checks it). */
/** The members of a new event's header that the ledger sets, not the domain. */
export type LedgerHeaderValues = Pick<EventHeader, 'seq' | 'ts' | 'payload_hash' | 'prev_hash'>;

/**
 * A new event's header: the domain's values (absent = null, other members such as the payload
 * left out) and the ledger's own. Filled member by member: on Node 20, spreading an object and
 * adding members it lacks (\`{ ...input, seq, ts, payload_hash, prev_hash }\`) cost ~12 µs of CPU,
 * a new hidden class each time, where this costs ~1 µs (BENCHMARKS.md, fifth session).
 */
export function newEventHeader(values: Partial<Record<EventHeaderField, unknown>>, own: LedgerHeaderValues): EventHeader {
  const header = toEventHeader(values as EventHeaderValues);
  header.seq = own.seq;
  header.ts = own.ts;
  header.payload_hash = own.payload_hash;
  header.prev_hash = own.prev_hash;
  return header;
}

export function headerOfRow(r: readonly unknown[]): EventHeader {
  const header: Record<string, unknown> = {};
  for (let i = 0; i < EVENT_HEADER_FIELDS.length; i++) header[EVENT_HEADER_FIELDS[i]!] = r[i];
  return header as EventHeader;
}

export const HEX64 = /^[0-9a-f]{64}$/;

export function isPositiveInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
}

/** Untrusted: whether `v` is a value of this kind. */
function hasKind(kind: FieldKind, v: unknown): boolean {
  switch (kind) {
    case 'text': return typeof v === 'string';
    case 'text?': return v === null || typeof v === 'string';
    case 'seq': return isPositiveInt(v);
    case 'int?': return v === null || (typeof v === 'number' && Number.isSafeInteger(v));
    case 'hex64?': return v === null || (typeof v === 'string' && HEX64.test(v));
  }
}

/** Untrusted: whether the first 16 values of a row have the header's types, field by field. */
export function rowHasHeaderTypes(r: readonly unknown[]): boolean {
  for (let i = 0; i < KINDS.length; i++) if (!hasKind(KINDS[i]!, r[i])) return false;
  return true;
}

const KIND_PROBLEM: Record<FieldKind, string> = {
  seq: 'is not a positive integer',
  text: 'is not a string',
  'text?': 'is not a string or null',
  'int?': 'is not an integer or null',
  'hex64?': 'is not 64 lowercase hex digits or null',
};

/** Untrusted: why a header is not an EventHeader of exactly the contract's fields, or null. */
export function headerProblem(header: unknown): string | null {
  if (header === null || typeof header !== 'object' || Array.isArray(header)) return 'not an object';
  const h = header as Record<string, unknown>;
  // The common case in one pass: 16 own keys that are the 16 fields, each of its kind.
  if (Object.keys(h).length === KINDS.length && KINDS.every((kind, i) => Object.hasOwn(h, EVENT_HEADER_FIELDS[i]!) && hasKind(kind, h[EVENT_HEADER_FIELDS[i]!]))) {
    return null;
  }
  for (const k of Object.keys(h)) if (!Object.hasOwn(EVENT_HEADER, k)) return `unexpected field ${JSON.stringify(k)}`;
  for (const f of EVENT_HEADER_FIELDS) if (!Object.hasOwn(h, f)) return `missing field ${f}`;
  const bad = KINDS.findIndex((kind, i) => !hasKind(kind, h[EVENT_HEADER_FIELDS[i]!]));
  return bad === -1 ? null : `${EVENT_HEADER_FIELDS[bad]} ${KIND_PROBLEM[KINDS[bad]!]}`;
}
