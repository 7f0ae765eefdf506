import test from 'ava';
import {
  EVENT_HEADER_FIELDS, EVENT_ROW_COLUMNS, type EventHeader, GENESIS_PREV_HASH, ROW, ROW_HASH, ROW_PAYLOAD,
  headerOfRow, headerProblem, rowHasHeaderTypes, toEventHeader,
} from '../../../src/core/event-shape.js';
import { canonicalHeader } from '../../../src/core/event-hash.js';
import { canonicalize } from '../../../src/core/jcs.js';
import type { JsonObject } from '../../../src/core/json.js';

const header: EventHeader = {
  seq: 7, account_id: 'acme', ts: '2025-01-01T00:00:00.000Z', type: 'completed', operation_id: 'op_1',
  idempotency_key: 'k', fingerprint: 'f'.repeat(64), actor: 'prn_1', agent_run_id: null, method: 'POST',
  route: '/v1/refunds', state: 'succeeded', provider_ref: 're_1', response_status: 201, payload_hash: 'a'.repeat(64),
  prev_hash: GENESIS_PREV_HASH,
};

test('the header has the contract\'s 16 fields in the contract\'s order, and a row adds hash and payload', (t) => {
  t.deepEqual([...EVENT_HEADER_FIELDS], [
    'seq', 'account_id', 'ts', 'type', 'operation_id', 'idempotency_key', 'fingerprint', 'actor', 'agent_run_id',
    'method', 'route', 'state', 'provider_ref', 'response_status', 'payload_hash', 'prev_hash',
  ]);
  t.deepEqual([...EVENT_ROW_COLUMNS], [...EVENT_HEADER_FIELDS, 'hash', 'payload']);
  EVENT_HEADER_FIELDS.forEach((f, i) => t.is(ROW[f], i));
  t.is(EVENT_ROW_COLUMNS[ROW_HASH], 'hash');
  t.is(EVENT_ROW_COLUMNS[ROW_PAYLOAD], 'payload');
});

test('toEventHeader keeps exactly the header fields, in contract order, absent nullable ones as null', (t) => {
  const wide = { hash: 'h', payload: null, extra: 1, ...Object.fromEntries(Object.entries(header).reverse()) } as unknown as EventHeader;
  t.deepEqual(Object.keys(toEventHeader(wide)), [...EVENT_HEADER_FIELDS]);
  t.deepEqual(toEventHeader(wide), header);
  const sparse = toEventHeader({ seq: 1, account_id: 'a', ts: 't', type: 'attempted', prev_hash: GENESIS_PREV_HASH });
  t.is(sparse.route, null);
  t.is(sparse.response_status, null);
  t.is(headerProblem(sparse), null);
});

test('a row and its header convert both ways', (t) => {
  const row = [...EVENT_HEADER_FIELDS.map((f) => header[f]), 'hash', null];
  t.deepEqual(headerOfRow(row), header);
  t.true(rowHasHeaderTypes(row));
});

test('headerProblem names the first thing wrong with an untrusted header', (t) => {
  t.is(headerProblem(header), null);
  t.is(headerProblem([]), 'not an object');
  t.is(headerProblem({ ...header, extra: 1 }), 'unexpected field "extra"');
  const { route: _route, ...missing } = header;
  t.is(headerProblem(missing), 'missing field route');
  t.is(headerProblem({ ...header, seq: 0 }), 'seq is not a positive integer');
  t.is(headerProblem({ ...header, ts: null }), 'ts is not a string');
  t.is(headerProblem({ ...header, route: 5 }), 'route is not a string or null');
  t.is(headerProblem({ ...header, response_status: 1.5 }), 'response_status is not an integer or null');
  t.is(headerProblem({ ...header, payload_hash: 'A'.repeat(64) }), 'payload_hash is not 64 lowercase hex digits or null');
  t.is(headerProblem(Object.assign(Object.create({ seq: 1 }), { ...header, seq: undefined })), 'seq is not a positive integer');
});

test('a header with a value not of its kind is canonicalized by JCS itself, not the fast path', (t) => {
  const odd = { ...header, route: 5, provider_ref: true } as unknown as EventHeader;
  t.is(canonicalHeader(odd), canonicalize(odd as unknown as JsonObject));
});
