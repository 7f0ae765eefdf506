// toEventHeader and pushHeaderRow write the header's fields out one by one (for speed, see
// event-shape.ts): these hold their order to EVENT_HEADER's, which the hash, the rows and the
// contract's field order all derive from.
import test from 'ava';
import { EVENT_HEADER_FIELDS, type EventHeader, pushHeaderRow, toEventHeader } from '../../src/core/event-shape.js';

/** A header whose every field has a value of its own, so a swapped pair shows. */
function distinctHeader(): EventHeader {
  return Object.fromEntries(EVENT_HEADER_FIELDS.map((f, i) => [f, f === 'seq' || f === 'response_status' ? i + 1 : `value-of-${f}`])) as unknown as EventHeader;
}

test('toEventHeader keeps every field, in contract order', (t) => {
  const h = distinctHeader();
  const header = toEventHeader(h);
  t.deepEqual(Object.keys(header), [...EVENT_HEADER_FIELDS]);
  t.deepEqual(Object.values(header), EVENT_HEADER_FIELDS.map((f) => h[f]));
});

test('toEventHeader makes an absent nullable field null, and drops members that are not header fields', (t) => {
  const header = toEventHeader({ seq: 1, account_id: 'acme', ts: '2026-12-07T00:00:00.000Z', type: 'attempted', prev_hash: '0'.repeat(64), payload: 'x' } as never);
  t.is(header.operation_id, null);
  t.is(header.payload_hash, null);
  t.false('payload' in header);
  t.deepEqual(Object.keys(header), [...EVENT_HEADER_FIELDS]);
});

test('pushHeaderRow appends the values in contract order', (t) => {
  const h = distinctHeader();
  const row: unknown[] = ['before'];
  pushHeaderRow(row, h);
  t.deepEqual(row, ['before', ...EVENT_HEADER_FIELDS.map((f) => h[f])]);
});
