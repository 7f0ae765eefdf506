import test from 'ava';
import { createPublicKey, verify } from 'node:crypto';
import { signGrant, verifyGrant, type GrantFields } from '../../src/core/grant.js';
import { generateSeed, publicKeyInfo, signingKeyFromSeed } from '../../src/core/signing-key.js';

const key = signingKeyFromSeed(generateSeed(), 'gatehouse/test');
const fields: GrantFields = {
  approval_id: 'apr_1', operation_id: 'op_1', account_id: 'acme', idempotency_key: 'pay-1',
  fingerprint: 'a'.repeat(64), approved_by: ['prn_b', 'prn_a'], approved_at: '2030-01-01T00:00:00.000Z', expires_at: '2030-01-01T00:15:00.000Z',
};

/** An Ed25519 check that shares nothing with the code under test: node:crypto, raw key wrapped as SPKI DER, JCS by hand. */
function independentCheck(grant: Record<string, unknown>, rawPublicKeyBase64: string): boolean {
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(rawPublicKeyBase64, 'base64')]);
  const { signature, ...rest } = grant;
  // JCS of flat string members and one array of strings: sorted names, JSON.stringify escaping.
  const jcs = '{' + Object.keys(rest).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(rest[k])}`).join(',') + '}';
  return verify(null, Buffer.from(jcs), createPublicKey({ key: spki, format: 'der', type: 'spki' }), Buffer.from(String(signature), 'base64url'));
}

test('a grant is signed over the JCS of its other fields, base64url without padding, and an independent Ed25519 check accepts it', (t) => {
  const grant = signGrant(key, fields);
  t.is(grant.key_id, key.keyId);
  t.regex(grant.signature, /^[A-Za-z0-9_-]{86}$/);
  t.deepEqual(grant.approved_by, ['prn_b', 'prn_a']);
  t.true(independentCheck(grant as unknown as Record<string, unknown>, publicKeyInfo(key).public_key));
  t.true(verifyGrant(grant, [publicKeyInfo(key)]));
});

test('when any field of a grant is changed after signing, verifyGrant refuses it', (t) => {
  const grant = signGrant(key, fields);
  for (const [field, value] of Object.entries({ fingerprint: 'b'.repeat(64), expires_at: '2031-01-01T00:00:00.000Z', approved_by: ['prn_a'], operation_id: 'op_2' })) {
    t.false(verifyGrant({ ...grant, [field]: value }, [publicKeyInfo(key)]), field);
  }
  const flipped = Buffer.from(grant.signature, 'base64url');
  flipped[10]! ^= 0x01;
  t.false(verifyGrant({ ...grant, signature: flipped.toString('base64url') }, [publicKeyInfo(key)]));
});

test('when the signing key is not among the trusted keys, or the input is malformed, verifyGrant answers false rather than throwing', (t) => {
  const grant = signGrant(key, fields);
  const other = signingKeyFromSeed(generateSeed(), 'gatehouse/other');
  t.false(verifyGrant(grant, [{ ...publicKeyInfo(other), key_id: key.keyId }]));
  t.false(verifyGrant(grant, []));
  t.false(verifyGrant({ ...grant, signature: 42 } as never, [publicKeyInfo(key)]));
  t.false(verifyGrant(null as never, [publicKeyInfo(key)]));
});
