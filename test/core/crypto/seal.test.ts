import test from 'ava';
import { SealError, generateKey, openPayload, sealPayload, unwrapDataKey, wrapDataKey } from '../../../src/core/seal.js';
import { loadSodium } from '../../../src/core/sodium.js';

const sodium = await loadSodium();
const text = (s: string) => new TextEncoder().encode(s);

test('loadSodium resolves to the same ready instance', async (t) => {
  t.is(await loadSodium(), sodium);
});

test('payload round trip; layout is nonce(24) ‖ ciphertext+tag', (t) => {
  const key = generateKey(sodium);
  t.is(key.length, 32);
  const plain = text('{"amount":100}');
  const sealed = sealPayload(sodium, key, 'acct-1', 7, plain);
  t.is(sealed.length, 24 + plain.length + 16);
  t.deepEqual(Buffer.from(openPayload(sodium, key, 'acct-1', 7, sealed)), Buffer.from(plain));
  // fresh nonce each time
  t.notDeepEqual(Buffer.from(sealPayload(sodium, key, 'acct-1', 7, plain)), Buffer.from(sealed));
  // empty plaintext works
  t.is(openPayload(sodium, key, 'acct-1', 8, sealPayload(sodium, key, 'acct-1', 8, new Uint8Array())).length, 0);
});

test('wrong account, seq, key or a flipped byte fails with SealError', (t) => {
  const key = generateKey(sodium);
  const sealed = sealPayload(sodium, key, 'acct-1', 7, text('secret'));
  const cases: Array<[string, () => unknown]> = [
    ['account', () => openPayload(sodium, key, 'acct-2', 7, sealed)],
    ['seq', () => openPayload(sodium, key, 'acct-1', 8, sealed)],
    ['seq/account boundary', () => openPayload(sodium, key, 'acct-1\n7', 7, sealed)],
    ['key', () => openPayload(sodium, generateKey(sodium), 'acct-1', 7, sealed)],
    ['nonce byte', () => openPayload(sodium, key, 'acct-1', 7, Uint8Array.from(sealed, (b, i) => (i === 3 ? b ^ 1 : b)))],
    ['ciphertext byte', () => openPayload(sodium, key, 'acct-1', 7, Uint8Array.from(sealed, (b, i) => (i === 30 ? b ^ 1 : b)))],
  ];
  for (const [name, run] of cases) {
    const e = t.throws(run, { instanceOf: SealError }, name);
    t.is(e?.code, 'open_failed', name);
  }
  t.is(t.throws(() => openPayload(sodium, key, 'acct-1', 7, sealed.subarray(0, 39)), { instanceOf: SealError })?.code, 'malformed');
  t.is(t.throws(() => openPayload(sodium, key.subarray(1), 'acct-1', 7, sealed), { instanceOf: SealError })?.code, 'bad_key');
});

test('data key wrap round trip binds the account', (t) => {
  const master = generateKey(sodium);
  const dataKey = generateKey(sodium);
  const wrapped = wrapDataKey(sodium, master, 'acct-1', dataKey);
  t.deepEqual(Buffer.from(unwrapDataKey(sodium, master, 'acct-1', wrapped)), Buffer.from(dataKey));
  t.throws(() => unwrapDataKey(sodium, master, 'acct-2', wrapped), { instanceOf: SealError });
  t.throws(() => unwrapDataKey(sodium, generateKey(sodium), 'acct-1', wrapped), { instanceOf: SealError });
  // a data key wrap cannot be opened as a payload and vice versa (different associated data)
  t.throws(() => openPayload(sodium, master, 'acct-1', 1, wrapped), { instanceOf: SealError });
});
