import test from 'ava';
import { generateKeyPairSync, sign } from 'node:crypto';
import { canonicalize } from '../../src/core/jcs.js';
import type { JsonObject } from '../../src/core/json.js';
import { GrantVerificationError, PinnedKeys, verifyGrant, type Grant } from '../../src/client/index.js';

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { privateKey, raw: der.subarray(der.length - 32).toString('base64') };
}

const now = Date.parse('2025-01-01T00:00:00.000Z');
const fields: Omit<Grant, 'signature'> = {
  approval_id: 'apr_1',
  operation_id: 'op_1',
  account_id: 'acct_a',
  idempotency_key: 'ik_1',
  fingerprint: 'a'.repeat(64),
  approved_by: ['prn_b'],
  approved_at: '2025-01-01T00:00:00.000Z',
  expires_at: '2025-01-01T00:15:00.000Z',
  key_id: 'k1',
};
const expected = { operation_id: 'op_1', account_id: 'acct_a', idempotency_key: 'ik_1', fingerprint: 'a'.repeat(64) };

function signed(privateKey: Parameters<typeof sign>[2], f: Omit<Grant, 'signature'> = fields): Grant {
  return { ...f, signature: sign(null, Buffer.from(canonicalize(f as unknown as JsonObject)), privateKey).toString('base64url') };
}

test('a grant signed by a pinned key over the JCS of its other fields verifies', (t) => {
  const k = keyPair();
  t.notThrows(() => verifyGrant(signed(k.privateKey), new PinnedKeys({ k1: k.raw }), expected, now));
});

test('pinned keys accept the GET /v1/keys document and its array', (t) => {
  const k = keyPair();
  const grant = signed(k.privateKey);
  t.notThrows(() => verifyGrant(grant, new PinnedKeys({ keys: [{ key_id: 'k1', public_key: k.raw }] }), expected, now));
  t.notThrows(() => verifyGrant(grant, new PinnedKeys([{ key_id: 'k1', public_key: k.raw }]), expected, now));
});

test('a grant from a key that is not pinned is refused, even if its signature is sound', (t) => {
  const k = keyPair();
  const other = keyPair();
  const e = t.throws(() => verifyGrant(signed(k.privateKey), new PinnedKeys({ k1: other.raw }), expected, now), { instanceOf: GrantVerificationError });
  t.regex(e!.message, /does not verify/);
  t.throws(() => verifyGrant(signed(k.privateKey), new PinnedKeys({ k2: k.raw }), expected, now), { message: /not pinned/ });
});

test('changing any signed field breaks the signature', (t) => {
  const k = keyPair();
  const pinned = new PinnedKeys({ k1: k.raw });
  const grant = signed(k.privateKey);
  for (const [field, value] of [
    ['approved_by', ['prn_mallory']],
    ['expires_at', '2030-01-01T00:00:00.000Z'],
    ['approval_id', 'apr_2'],
  ] as const) {
    t.throws(() => verifyGrant({ ...grant, [field]: value } as Grant, pinned, expected, now), { instanceOf: GrantVerificationError }, field);
  }
  // One bit of the signature flipped. (Writing 'AA' over its last two characters left it unchanged
  // about once in 256 runs: when they were already 'A' and a character that differs from 'A' only
  // in the padding bits base64url decoders ignore.)
  const tampered = Buffer.from(grant.signature, 'base64url');
  tampered[0]! ^= 1;
  t.throws(() => verifyGrant({ ...grant, signature: tampered.toString('base64url') }, pinned, expected, now), { instanceOf: GrantVerificationError });
});

test('a validly signed grant for another operation or fingerprint is refused', (t) => {
  const k = keyPair();
  const pinned = new PinnedKeys({ k1: k.raw });
  const grant = signed(k.privateKey);
  t.throws(() => verifyGrant(grant, pinned, { ...expected, fingerprint: 'b'.repeat(64) }, now), { message: /fingerprint/ });
  t.throws(() => verifyGrant(grant, pinned, { ...expected, operation_id: 'op_2' }, now), { message: /operation_id/ });
  t.throws(() => verifyGrant(grant, pinned, { ...expected, idempotency_key: 'ik_2' }, now), { message: /idempotency_key/ });
  t.throws(() => verifyGrant(grant, pinned, { ...expected, account_id: 'acct_b' }, now), { message: /account_id/ });
});

test('an expired grant is refused', (t) => {
  const k = keyPair();
  t.throws(() => verifyGrant(signed(k.privateKey), new PinnedKeys({ k1: k.raw }), expected, Date.parse(fields.expires_at)), { message: /expired/ });
});

test('a raw public key of the wrong length is refused when pinning', (t) => {
  t.throws(() => new PinnedKeys({ k1: Buffer.alloc(31).toString('base64') }), { instanceOf: TypeError });
});
