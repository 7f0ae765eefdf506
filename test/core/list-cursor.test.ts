import test from 'ava';
import { decodeListCursor, encodeListCursor, questionOf, type CursorRules, type ListCursor } from '../../src/core/list-cursor.js';
import { DomainError } from '../../src/core/errors.js';
import { newId } from '../../src/core/ids.js';

/** The cursor every list shares (docs/http-api.md, Lists), without a server. */

type Filters = { colour?: string; size?: number };
const RULES: CursorRules<Filters> = {
  idPrefix: 'thing',
  isAccountId: (value) => /^[a-z]+$/.test(value),
  filters: (raw) => {
    if (Object.keys(raw).some((name) => name !== 'colour' && name !== 'size')) throw new Error('unknown filter');
    return raw as Filters;
  },
};
const position = { at: '2025-03-01T09:30:00.000Z', id: newId('thing', 0) };

function refusal(t: import('ava').ExecutionContext, fn: () => unknown, message: RegExp, what?: string): void {
  const error = t.throws(fn, { instanceOf: DomainError }, what);
  t.is(error?.code, 'invalid_request', what);
  t.is(error?.details.parameter, 'cursor', what);
  t.regex(error?.message ?? '', message, what);
}

test('a cursor comes back as it was given out', (t) => {
  const cursor = { account: 'acme', filters: { colour: 'red', size: 3 }, order: 'desc' as const, ...position };
  t.deepEqual(decodeListCursor(encodeListCursor(cursor), RULES), cursor);
  t.deepEqual(decodeListCursor(encodeListCursor({ ...cursor, account: null }), RULES).account, null);
});

test('a cursor continues its own question: the query may repeat it, not change it', (t) => {
  const cursor: ListCursor<Filters> = { account: 'acme', filters: { colour: 'red' }, order: 'asc', ...position };
  t.deepEqual(questionOf(cursor, { filters: {} }, 'desc'), { account: 'acme', filters: { colour: 'red' }, order: 'asc' });
  t.deepEqual(questionOf(cursor, { account: 'acme', filters: { colour: 'red' }, order: 'asc' }, 'desc').filters, { colour: 'red' });
  refusal(t, () => questionOf(cursor, { filters: { colour: 'blue' } }, 'desc'), /was made for other filters \(colour differs\)/);
  refusal(t, () => questionOf(cursor, { filters: { size: 1 } }, 'desc'), /was made for other filters \(size differs\)/);
  refusal(t, () => questionOf(cursor, { account: 'other', filters: {} }, 'desc'), /was made for another account_id/);
  refusal(t, () => questionOf({ ...cursor, account: null }, { account: 'acme', filters: {} }, 'desc'), /was made for another account_id/);
  refusal(t, () => questionOf(cursor, { filters: {}, order: 'desc' }, 'desc'), /was made for the other order/);
});

test('without a cursor the question is the query\'s, absent filters left out', (t) => {
  t.deepEqual(questionOf(null, { filters: { colour: undefined, size: 2 } }, 'desc'), { account: null, filters: { size: 2 }, order: 'desc' });
});

test('anything a server did not give out is refused as a bad cursor', (t) => {
  const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const good = { v: 1, account: 'acme', filters: {}, order: 'asc', ...position };
  for (const [text, what] of [
    ['!!', 'not base64url JSON'],
    [forged([position.at, position.id]), 'an array'],
    [forged({ ...good, v: 2 }), 'another version'],
    [forged({ ...good, account: 'Not An Account' }), 'an account id the list refuses'],
    [forged({ ...good, order: 'sideways' }), 'no order'],
    [forged({ ...good, at: '2025-03-01' }), 'a time not as stored'],
    [forged({ ...good, id: newId('other', 0) }), 'an id of another list'],
    [forged({ ...good, filters: { colour: '' } }), 'an empty filter'],
    [forged({ ...good, filters: { colour: { red: true } } }), 'a filter that is no parameter value'],
    [forged({ ...good, filters: { shape: 'round' } }), 'a filter the list does not have'],
  ] as const) {
    refusal(t, () => decodeListCursor(text, RULES), /^the query parameter "cursor" is not a cursor this server gave out$/, what);
  }
});
