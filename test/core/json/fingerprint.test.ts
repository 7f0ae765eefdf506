import test from 'ava';
import { createHash } from 'node:crypto';
import { fingerprint } from '../../../src/core/fingerprint.js';
import { sha256Hex } from '../../../src/core/hash.js';
import { parseStrictJson } from '../../../src/core/strict-json.js';

test('sha256Hex matches the FIPS 180-2 vectors', (t) => {
  t.is(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  t.is(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.is(
    sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  );
});

test('sha256 of a string hashes its UTF-8 bytes, and bytes hash the same as text', (t) => {
  t.is(sha256Hex('€'), sha256Hex(new Uint8Array([0xe2, 0x82, 0xac])));
  t.is(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('the fingerprint is SHA-256 of the canonical {account_id, command, method, route}', (t) => {
  const canonical = '{"account_id":"acct_1","command":{"amount":100,"to":"x"},"method":"POST","route":"/v1/payments"}';
  const expected = createHash('sha256').update(canonical, 'utf8').digest('hex');
  t.is(
    fingerprint({ route: '/v1/payments', method: 'POST', command: { to: 'x', amount: 100 }, account_id: 'acct_1' }),
    expected,
  );
});

test('the fingerprint does not depend on member order or number spelling in the command', (t) => {
  const base = { account_id: 'a', method: 'POST', route: '/r' };
  const one = fingerprint({ ...base, command: parseStrictJson('{"x":4.50,"y":[1E30,{"b":1,"a":2}]}') });
  const two = fingerprint({ ...base, command: parseStrictJson('{ "y" : [1e+30, {"a":2,"b":1}], "x" : 4.5 }') });
  t.is(one, two);
  t.regex(one, /^[0-9a-f]{64}$/);
});

test('each of account, method, route and command changes the fingerprint', (t) => {
  const base = { account_id: 'a', method: 'POST', route: '/r', command: { n: 1 } };
  const seen = new Set([
    fingerprint(base),
    fingerprint({ ...base, account_id: 'b' }),
    fingerprint({ ...base, method: 'PUT' }),
    fingerprint({ ...base, route: '/s' }),
    fingerprint({ ...base, command: { n: 2 } }),
    fingerprint({ ...base, command: { n: '1' } }),
  ]);
  t.is(seen.size, 6);
});

test('the largest distinct safe integer amounts get distinct fingerprints', (t) => {
  const base = { account_id: 'a', method: 'POST', route: '/r' };
  t.not(
    fingerprint({ ...base, command: { amount: 9007199254740991 } }),
    fingerprint({ ...base, command: { amount: 9007199254740990 } }),
  );
});

test('members outside the four named ones are not part of the fingerprint', (t) => {
  const base = { account_id: 'a', method: 'POST', route: '/r', command: null };
  const extra = { ...base, idempotency_key: 'k', traceparent: 't' };
  t.is(fingerprint(extra), fingerprint(base));
});

test('a command holding a member named like a fingerprint field cannot collide with the envelope', (t) => {
  const a = fingerprint({ account_id: 'a', method: 'POST', route: '/r', command: { method: 'GET' } });
  const b = fingerprint({ account_id: 'a', method: 'GET', route: '/r', command: { method: 'POST' } });
  t.not(a, b);
});
