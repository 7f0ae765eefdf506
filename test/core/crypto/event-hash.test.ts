import test from 'ava';
import { createHash } from 'node:crypto';
import { canonicalHeader, canonicalHeaderFromRow, eventHash, hashCanonicalHeader, rowHeaderHash } from '../../../src/core/event-hash.js';
import { asciiHeaderHash, asciiHeaderHashOfAccount, asciiHeaderHashOfAccountCheckedHex } from '../../../src/core/ascii-header-hash.js';
import { EVENT_HEADER_FIELDS, type EventHeader, GENESIS_PREV_HASH, ROW, rowHasHeaderTypes } from '../../../src/core/event-shape.js';
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

test('the ASCII byte writer hashes exactly what the string path hashes, or declines', (t) => {
  // Characters on both sides of every boundary the writer tests: controls, space, quote,
  // backslash, ~, DEL, Latin-1, BMP, astral (a surrogate pair) and lone surrogates.
  const alphabet = ['a', 'Z', '0', ' ', '!', '#', '[', ']', '~', '/', ':', ',', '{', '}', '"', '\\', '\u0000', '\u001f', '\n', '\u007f', '\u0080', 'é', '\u2028', '中', '😀', '\ud800', '\udfff'];
  let seed = 7;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const word = () => Array.from({ length: random(6) }, () => alphabet[random(alphabet.length)]).join('');
  let matched = 0;
  let declined = 0;
  for (let i = 0; i < 4000; i++) {
    const h: EventHeader = { ...base, seq: 1 + random(2 ** 20), response_status: random(3) === 0 ? null : random(2) ? 201 : -7 };
    for (const f of EVENT_HEADER_FIELDS) {
      if (f === 'payload_hash' && random(2) === 0) h.payload_hash = random(2) ? 'a0'.repeat(32) : null;
      if (f === 'seq' || f === 'response_status' || f === 'payload_hash' || random(3) !== 0) continue;
      (h as Record<string, unknown>)[f] = f !== 'account_id' && f !== 'ts' && f !== 'type' && f !== 'prev_hash' && random(4) === 0 ? null : word();
    }
    const row = EVENT_HEADER_FIELDS.map((f) => h[f]);
    const strings = EVENT_HEADER_FIELDS.map((f) => h[f]).filter((v): v is string => typeof v === 'string').join('');
    const fast = asciiHeaderHash(row);
    if (/^[\u0020-\u007e]*$/.test(strings) && !/["\\]/.test(strings)) {
      t.is(fast, hashCanonicalHeader(canonicalize(h as unknown as JsonObject)), JSON.stringify(h));
      matched++;
    } else {
      t.is(fast, null, JSON.stringify(h));
      declined++;
    }
    // Whichever way a row goes, its hash is the reference's (or null where JCS refuses it).
    let reference: string | null = null;
    try {
      reference = eventHash(h);
    } catch {
      // a lone surrogate
    }
    const viaRow = rowHeaderHash(row);
    if (viaRow !== null) t.is<string | null, string | null>(viaRow, reference);
    else t.true(reference === null || canonicalHeaderFromRow(row) === null);
  }
  t.true(matched > 100 && declined > 100);
  // A value not of its field's kind is declined by both, as rowHasHeaderTypes declines it.
  const wrong: Array<[keyof EventHeader, unknown]> = [
    ['seq', 0], ['seq', 1.5], ['seq', '1'], ['seq', null], ['seq', 2 ** 53], ['response_status', 1.5], ['response_status', '201'],
    ['account_id', null], ['ts', 5], ['type', undefined], ['prev_hash', null], ['route', 7], ['actor', Buffer.from('x')],
    ['payload_hash', 'A'.repeat(64)], ['payload_hash', 'a'.repeat(63)], ['payload_hash', 'g'.repeat(64)], ['payload_hash', 64],
  ];
  for (const [f, v] of wrong) {
    const row: unknown[] = EVENT_HEADER_FIELDS.map((k) => (k === f ? v : base[k]));
    t.false(rowHasHeaderTypes(row), `${f}=${String(v)}`);
    t.is(asciiHeaderHash(row), null, `${f}=${String(v)}`);
    t.is(rowHeaderHash(row), null, `${f}=${String(v)}`);
  }
  // Values longer than the writer's buffer take the string path.
  const long = { ...base, route: '/'.repeat(40_000) };
  t.is(asciiHeaderHash(EVENT_HEADER_FIELDS.map((f) => long[f])), null);
  t.is(rowHeaderHash(EVENT_HEADER_FIELDS.map((f) => long[f])), eventHash(long));
});

test('the slices\' writers (no account_id column; hashes known hex) hash what the full row hashes, whatever account came before', (t) => {
  // The account's start of header is written once per run of rows of one account: rows of
  // accounts taking turns, with full rows (which write their own start) in between, must
  // each hash as the reference does; a plain account after one that is not, too.
  const accounts = ['acme', 'a', 'acme-longer-name', 'acme', 'bé', 'acme'];
  let seed = 11;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let i = 0; i < 600; i++) {
    const account = accounts[random(accounts.length)]!;
    const h: EventHeader = {
      ...base, seq: 1 + random(1000), account_id: account, route: `/v1/r${random(100)}`,
      payload_hash: random(2) ? null : createHash('sha256').update(String(i)).digest('hex'),
      prev_hash: createHash('sha256').update(`p${i}`).digest('hex'),
    };
    const full = EVENT_HEADER_FIELDS.map((f) => h[f]);
    const withoutAccount = full.filter((_, k) => k !== ROW.account_id);
    const reference = /^[\u0020-\u007e]*$/.test(account) ? hashCanonicalHeader(canonicalize(h as unknown as JsonObject)) : null;
    if (random(3) === 0) t.is(asciiHeaderHash(full), reference);
    t.is(asciiHeaderHashOfAccountCheckedHex(withoutAccount, account), reference, `${i}: ${account}`);
    t.is(asciiHeaderHashOfAccount(withoutAccount, account), reference, `${i}: ${account}`);
  }
  // The checked-hex writer still refuses a hash that is not 64 characters long.
  const short = EVENT_HEADER_FIELDS.filter((f) => f !== 'account_id').map((f) => (f === 'prev_hash' ? 'ab' : base[f]));
  t.is(asciiHeaderHashOfAccountCheckedHex(short, 'acct-1'), null);
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
