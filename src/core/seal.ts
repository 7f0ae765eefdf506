/**
 * Payload sealing with XChaCha20-Poly1305-IETF (libsodium). A sealed value is
 * nonce (24 bytes) ‖ ciphertext (plaintext + 16-byte tag).
 *
 *   payload:  key = the account's data key, AD = "gatehouse:payload:v1\n" + account_id + "\n" + seq
 *   data key: key = the master key,          AD = "gatehouse:data-key:v1\n" + account_id
 */
import { randomBytes } from './random.js';
import type { Sodium } from './sodium.js';

export const KEY_BYTES = 32;
export const NONCE_BYTES = 24;
export const TAG_BYTES = 16;

export type SealErrorCode = 'open_failed' | 'bad_key' | 'malformed';

export class SealError extends Error {
  override name = 'SealError';
  constructor(
    readonly code: SealErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const utf8 = new TextEncoder();

export function payloadAssociatedData(accountId: string, seq: number): Uint8Array {
  return utf8.encode(`gatehouse:payload:v1\n${accountId}\n${seq}`);
}

export function dataKeyAssociatedData(accountId: string): Uint8Array {
  return utf8.encode(`gatehouse:data-key:v1\n${accountId}`);
}

function checkKey(key: Uint8Array, what: string): void {
  if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) throw new SealError('bad_key', `${what} must be ${KEY_BYTES} bytes`);
}

function checkSeq(seq: number): void {
  if (!Number.isSafeInteger(seq) || seq < 1) throw new SealError('malformed', `bad seq ${seq}`);
}

function seal(sodium: Sodium, key: Uint8Array, ad: Uint8Array, plaintext: Uint8Array): Uint8Array {
  // Not libsodium's randombytes_buf: libsodium-wrappers fills it through WebCrypto 4 bytes
  // per call, which profiled at ~10 % of a claim's CPU. The nonce only needs to be random (192 bits).
  const nonce = randomBytes(NONCE_BYTES);
  const ct = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, ad, null, nonce, key);
  const out = new Uint8Array(NONCE_BYTES + ct.length);
  out.set(nonce, 0);
  out.set(ct, NONCE_BYTES);
  return out;
}

function open(sodium: Sodium, key: Uint8Array, ad: Uint8Array, sealed: Uint8Array, what: string): Uint8Array {
  if (!(sealed instanceof Uint8Array) || sealed.length < NONCE_BYTES + TAG_BYTES) {
    throw new SealError('malformed', `${what} is too short to be sealed`);
  }
  try {
    return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
      null,
      sealed.subarray(NONCE_BYTES),
      ad,
      sealed.subarray(0, NONCE_BYTES),
      key,
    );
  } catch {
    throw new SealError('open_failed', `${what} does not decrypt (wrong key, account or seq, or altered bytes)`);
  }
}

/** A fresh random 32-byte key (data key or master key). */
export function generateKey(sodium: Sodium): Uint8Array {
  return sodium.crypto_aead_xchacha20poly1305_ietf_keygen();
}

/** Encrypt an event payload under the account's data key, bound to account and seq. */
export function sealPayload(sodium: Sodium, dataKey: Uint8Array, accountId: string, seq: number, plaintext: Uint8Array): Uint8Array {
  checkKey(dataKey, 'data key');
  checkSeq(seq);
  return seal(sodium, dataKey, payloadAssociatedData(accountId, seq), plaintext);
}

/** Decrypt an event payload; throws SealError('open_failed') when it is not this account's seq. */
export function openPayload(sodium: Sodium, dataKey: Uint8Array, accountId: string, seq: number, sealed: Uint8Array): Uint8Array {
  checkKey(dataKey, 'data key');
  checkSeq(seq);
  return open(sodium, dataKey, payloadAssociatedData(accountId, seq), sealed, 'payload');
}

/** Wrap an account's data key under the master key. */
export function wrapDataKey(sodium: Sodium, masterKey: Uint8Array, accountId: string, dataKey: Uint8Array): Uint8Array {
  checkKey(masterKey, 'master key');
  checkKey(dataKey, 'data key');
  return seal(sodium, masterKey, dataKeyAssociatedData(accountId), dataKey);
}

/** Unwrap an account's data key; throws SealError('open_failed') on a wrong master key or account. */
export function unwrapDataKey(sodium: Sodium, masterKey: Uint8Array, accountId: string, wrapped: Uint8Array): Uint8Array {
  checkKey(masterKey, 'master key');
  const key = open(sodium, masterKey, dataKeyAssociatedData(accountId), wrapped, 'wrapped data key');
  if (key.length !== KEY_BYTES) throw new SealError('malformed', 'wrapped data key has the wrong length');
  return key;
}
