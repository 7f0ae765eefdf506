import test from 'ava';
import { generateSeed, sign, signingKeyFromSeed, verifyDetached } from '../../../src/core/signing-key.js';
import { loadSodium } from '../../../src/core/sodium.js';

const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

// RFC 8032 §7.1, tests 1 and 2: seed, public key, message, signature.
const VECTORS = [
  {
    seed: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    seed: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
];

test('keys and signatures match RFC 8032\'s test vectors', (t) => {
  for (const v of VECTORS) {
    const key = signingKeyFromSeed(hex(v.seed), 'gatehouse/test');
    t.is(Buffer.from(key.publicKey).toString('hex'), v.publicKey);
    t.is(Buffer.from(sign(key, hex(v.message))).toString('hex'), v.signature);
    t.true(verifyDetached(key.publicKey, hex(v.message), hex(v.signature)));
  }
});

test('a key made from a seed signs exactly as libsodium did with the same seed (existing signing.key files keep their keys)', async (t) => {
  const sodium = await loadSodium();
  for (let i = 0; i < 20; i++) {
    const seed = generateSeed();
    const ours = signingKeyFromSeed(seed, 'gatehouse/test');
    const theirs = sodium.crypto_sign_seed_keypair(seed);
    t.deepEqual(Buffer.from(ours.publicKey), Buffer.from(theirs.publicKey));
    const message = new Uint8Array(Buffer.from(`checkpoint body ${i}\n`));
    t.deepEqual(Buffer.from(sign(ours, message)), Buffer.from(sodium.crypto_sign_detached(message, theirs.privateKey)));
    t.true(sodium.crypto_sign_verify_detached(sign(ours, message), message, ours.publicKey));
  }
});

test('a signature is refused when anything it covers changes, and malformed input is false, never a throw', (t) => {
  const v = VECTORS[1]!;
  const publicKey = hex(v.publicKey);
  const message = hex(v.message);
  const signature = hex(v.signature);
  t.true(verifyDetached(publicKey, message, signature));
  t.false(verifyDetached(publicKey, hex('73'), signature), 'another message');
  t.false(verifyDetached(hex(VECTORS[0]!.publicKey), message, signature), 'another key');
  for (const at of [0, 31, 32, 63]) {
    const bent = signature.slice();
    bent[at]! ^= 0x01;
    t.false(verifyDetached(publicKey, message, bent), `signature byte ${at} changed`);
  }
  t.false(verifyDetached(publicKey, message, signature.subarray(0, 63)), 'short signature');
  t.false(verifyDetached(publicKey.subarray(0, 31), message, signature), 'short key');
  // A 32-byte string whose y is not below the field prime is no point: OpenSSL will not make it a key.
  t.false(verifyDetached(new Uint8Array(32).fill(0xff), message, signature), 'not a point');
});

test('a malleated signature (S + L, the same point equation) is refused: RFC 8032 wants S below the group order', (t) => {
  const v = VECTORS[0]!;
  const signature = hex(v.signature);
  // L = 2^252 + 27742317777372353535851937790883648493, little-endian like S.
  const L = (1n << 252n) + 27742317777372353535851937790883648493n;
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]!);
  let sPlusL = s + L;
  const malleated = signature.slice();
  for (let i = 32; i < 64; i++) {
    malleated[i] = Number(sPlusL & 0xffn);
    sPlusL >>= 8n;
  }
  t.true(verifyDetached(hex(v.publicKey), hex(v.message), signature));
  t.false(verifyDetached(hex(v.publicKey), hex(v.message), malleated));
});
