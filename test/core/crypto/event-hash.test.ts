import test from 'ava';
import { createHash } from 'node:crypto';
import { canonicalHeader, canonicalHeaderFromRow, eventHash } from '../../../src/core/event-hash.js';
import { EVENT_HEADER_FIELDS, type EventHeader, GENESIS_PREV_HASH } from '../../../src/core/event-shape.js';
import { canonicalize } from '../../../src/core/jcs.js';
import type { JsonObject } from '../../../src/core/json.js';

const base: EventHeader = {
  seq: 1,
  account_id: 'acct-1',
  ts: '2025-01-01T00:00:00.000Z',
  type: 'attempted',
  operation_id: 'op-1',
  idempotency_key: 'k-1',
  fingerprint: 'f'.repeat(64),
  actor: 'prn-1',
  agent_run_id: null,
  method: 'POST',
  route: '/v1/refunds',
  state: 'in_progress',
  provider_ref: null,
  response_status: null,
  payload_hash: null,
  prev_hash: GENESIS_PREV_HASH,
};

test('genesis and field list', (t) => {
  t.is(GENESIS_PREV_HASH, '0'.repeat(64));
  t.deepEqual([...EVENT_HEADER_FIELDS].sort(), Object.keys(base).sort());
  t.is(EVENT_HEADER_FIELDS.length, 16);
});

test('event hash = SHA-256("gatehouse:event:v1\\n" + JCS(header)), spelled out by hand', (t) => {
  const jcs =
    '{"account_id":"acct-1","actor":"prn-1","agent_run_id":null,"fingerprint":"' +
    'f'.repeat(64) +
    '","idempotency_key":"k-1","method":"POST","operation_id":"op-1","payload_hash":null,"prev_hash":"' +
    '0'.repeat(64) +
    '","provider_ref":null,"response_status":null,"route":"/v1/refunds","seq":1,"state":"in_progress","ts":"2025-01-01T00:00:00.000Z","type":"attempted"}';
  t.is(canonicalHeader(base), jcs);
  const expected = createHash('sha256').update('gatehouse:event:v1\n' + jcs, 'utf8').digest('hex');
  t.is(eventHash(base), expected);
  t.regex(eventHash(base), /^[0-9a-f]{64}$/);
});

test('the header fast path agrees with canonicalize, including escapes and non-ASCII', (t) => {
  const strings = ['', 'plain', 'quote " and \\ backslash', 'tab\there', 'nl\nx', '\u0000\u001f\u007f', 'é ü 中文 😀', '\u2028\u2029', '</script>', 'a/b'];
  let i = 0;
  for (const s of strings) {
    for (const field of ['account_id', 'route', 'provider_ref', 'ts', 'state'] as const) {
      const h = { ...base, seq: 1 + i++, [field]: s, response_status: i % 2 ? 201 : null };
      t.is(canonicalHeader(h), canonicalize(h as unknown as JsonObject), `${field}=${JSON.stringify(s)}`);
    }
  }
  // large but safe integers
  const big = { ...base, seq: Number.MAX_SAFE_INTEGER, response_status: 599 };
  t.is(canonicalHeader(big), canonicalize(big as unknown as JsonObject));
});

test('the row fast path equals canonicalize, or declines (null) for anything JCS escapes or refuses', (t) => {
  const strings = ['', 'plain', 'quote " and \\ backslash', 'tab\there', 'nl\nx', '\u0000\u001f\u007f', 'é ü 中文 😀', '\u2028\u2029', '</script>', 'a/b', '/x\ud800', '\udc00y'];
  let i = 0;
  for (const s of strings) {
    for (const field of EVENT_HEADER_FIELDS) {
      if (field === 'seq' || field === 'response_status') continue;
      const h = { ...base, seq: 1 + i++, [field]: s, response_status: i % 2 ? 201 : null };
      const row = EVENT_HEADER_FIELDS.map((f) => h[f]);
      const fast = canonicalHeaderFromRow(row);
      const needsCare = /[\u0000-\u001f"\\\ud800-\udfff]/.test(s);
      if (needsCare) t.is(fast, null, `${field}=${JSON.stringify(s)}`);
      else t.is(fast, canonicalize(h as unknown as JsonObject), `${field}=${JSON.stringify(s)}`);
    }
  }
  for (const [f, v] of [['agent_run_id', null], ['payload_hash', 'a'.repeat(64)], ['response_status', 0]] as const) {
    const h = { ...base, seq: Number.MAX_SAFE_INTEGER, [f]: v };
    t.is(canonicalHeaderFromRow(EVENT_HEADER_FIELDS.map((k) => h[k])), canonicalize(h as unknown as JsonObject));
  }
});

test('a lone surrogate is refused, as JCS refuses it', (t) => {
  t.throws(() => eventHash({ ...base, route: '/x\ud800' }));
});

test('changing any field changes the hash', (t) => {
  const h0 = eventHash(base);
  for (const f of EVENT_HEADER_FIELDS) {
    const v = base[f];
    const changed = { ...base, [f]: typeof v === 'number' ? v + 1 : v === null ? 'x' : f === 'prev_hash' ? '1'.repeat(64) : v + 'x' };
    t.not(eventHash(changed as EventHeader), h0, f);
  }
});
