/**
 * Ed25519 signing keys and their names in Go's sumdb/note verifier-key format:
 *
 *   <name>+<8 hex key hash>+<base64(0x01 ‖ 32-byte public key)>
 *   key hash = first 4 bytes, big-endian, of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key)
 *
 * Signatures are node:crypto's (OpenSSL), as the gateway client's grant check already was:
 * one Ed25519 implementation in the codebase, no WebAssembly to load before a signature can be
 * checked (`gatehouse verify` starts sooner), and ~15 % less CPU per signature than libsodium's
 * here (BENCHMARKS.md, eighteenth session). libsodium stays for what only it does here: the
 * payloads' XChaCha20-Poly1305.
 */
import { type KeyObject, createHash, createPrivateKey, createPublicKey, randomBytes, sign as signWith, verify as verifyWith } from 'node:crypto';

export interface SigningKey {
  keyId: string;
  name: string;
  publicKey: Uint8Array;
  privateKey: KeyObject;
}

/** A known note signer: what verifyNote needs to check a signature line. */
export interface NoteVerifierKey {
  name: string;
  /** The 4-byte key hash as an unsigned 32-bit integer. */
  keyHash: number;
  publicKey: Uint8Array;
}

export interface PublicKeyInfo {
  key_id: string;
  algorithm: 'ed25519';
  public_key: string;
  note_verifier: string;
}

/** The note signature algorithm byte for Ed25519. */
export const ALG_ED25519 = 0x01;

export class SigningKeyError extends Error {
  override name = 'SigningKeyError';
}

/** 32 random bytes for an Ed25519 seed. */
export function generateSeed(): Uint8Array {
  return new Uint8Array(randomBytes(32));
}

/** DER prefixes (RFC 8410) of an Ed25519 PKCS#8 private key and SubjectPublicKeyInfo; the raw 32 bytes follow. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The Ed25519 key pair for a 32-byte seed, named `name` (e.g. `gatehouse/<ledger id>`). */
export function signingKeyFromSeed(seed: Uint8Array, name: string): SigningKey {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new SigningKeyError('an Ed25519 seed is 32 bytes');
  checkKeyName(name);
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(ED25519_SPKI_PREFIX.length));
  return { keyId: keyId(publicKey), name, publicKey, privateKey };
}

/** A node:crypto public key for a raw 32-byte Ed25519 key (throws SigningKeyError for any other length). */
export function ed25519PublicKeyObject(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw new SigningKeyError(`an Ed25519 public key is 32 bytes, got ${raw.length}`);
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** First 16 hex digits of SHA-256(public key). */
export function keyId(publicKey: Uint8Array): string {
  return createHash('sha256').update(publicKey).digest('hex').slice(0, 16);
}

/** Note key names: non-empty, no Unicode spaces, no plus signs (as Go's sumdb/note). */
export function isValidKeyName(name: string): boolean {
  return typeof name === 'string' && name !== '' && !/[\s+\u0000-\u001f\u007f\u0085]/u.test(name);
}

function checkKeyName(name: string): void {
  if (!isValidKeyName(name)) throw new SigningKeyError(`invalid note key name ${JSON.stringify(name)}`);
}

/** The sumdb/note key hash of an Ed25519 public key under `name`, as an unsigned 32-bit integer. */
export function noteKeyHash(name: string, publicKey: Uint8Array): number {
  const digest = createHash('sha256')
    .update(name, 'utf8')
    .update('\n')
    .update(Uint8Array.of(ALG_ED25519))
    .update(publicKey)
    .digest();
  return digest.readUInt32BE(0);
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** The note verifier key text `<name>+<hash>+<base64(0x01 ‖ pubkey)>`. */
export function noteVerifierText(name: string, publicKey: Uint8Array): string {
  checkKeyName(name);
  const keyBytes = Buffer.concat([Uint8Array.of(ALG_ED25519), publicKey]);
  return `${name}+${hex8(noteKeyHash(name, publicKey))}+${keyBytes.toString('base64')}`;
}

/** The public description of a key, as `GET /v1/keys` lists it. */
export function publicKeyInfo(key: SigningKey): PublicKeyInfo {
  return {
    key_id: key.keyId,
    algorithm: 'ed25519',
    public_key: Buffer.from(key.publicKey).toString('base64'),
    note_verifier: noteVerifierText(key.name, key.publicKey),
  };
}

/** What verifyNote needs to know about one of our own keys. */
export function noteVerifierKey(key: Pick<SigningKey, 'name' | 'publicKey'>): NoteVerifierKey {
  return { name: key.name, keyHash: noteKeyHash(key.name, key.publicKey), publicKey: key.publicKey };
}

const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Standard padded base64 with no whitespace. `canonical` (default) also refuses non-zero
 * padding bits; Go's base64.StdEncoding accepts them, so signature lines are read with
 * `canonical: false`.
 */
export function decodeStdBase64(text: string, canonical = true): Uint8Array | null {
  if (!STD_BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  if (canonical && bytes.toString('base64') !== text) return null;
  return new Uint8Array(bytes);
}

/**
 * Parse a note verifier key `<name>+<hash>+<base64(0x01 ‖ pubkey)>` and check that the hash
 * matches the name and key. Only Ed25519 (algorithm 0x01) keys are accepted.
 */
export function parseNoteVerifier(text: string): NoteVerifierKey {
  return parseVerifierKeyText(text, {
    what: 'note verifier key', idLabel: 'hash', algorithm: ALG_ED25519, algorithmError: 'not an Ed25519 key (0x01 ‖ 32 bytes)', keyHash: noteKeyHash,
  });
}

/** What tells one kind of C2SP verifier key from another (signed-note keys, witness cosigner keys). */
export interface VerifierKeyKind {
  /** In the error message: "malformed <what>: …". */
  what: string;
  /** What the kind calls its second field ("hash", "key id"). */
  idLabel: string;
  /** The algorithm byte before the 32-byte Ed25519 key. */
  algorithm: number;
  algorithmError: string;
  keyHash: (name: string, publicKey: Uint8Array) => number;
}

/**
 * A C2SP verifier key, `<name>+<8 hex digits>+<base64(algorithm ‖ 32-byte key)>`, with the
 * second field checked against the kind's hash of name and key; throws SigningKeyError naming
 * what is wrong.
 */
export function parseVerifierKeyText(text: string, kind: VerifierKeyKind): { name: string; keyHash: number; publicKey: Uint8Array } {
  const bad = (why: string): never => {
    throw new SigningKeyError(`malformed ${kind.what}: ${why}`);
  };
  if (typeof text !== 'string') bad('not a string');
  const parts = text.trim().split('+');
  // Base64 may itself contain '+': name and hash are the first two fields, the key the rest.
  if (parts.length < 3) bad(`expected <name>+<${kind.idLabel}>+<key>`);
  const name = parts[0]!;
  const hashHex = parts[1]!;
  const keyB64 = parts.slice(2).join('+');
  if (!isValidKeyName(name)) bad('invalid name');
  if (!/^[0-9a-f]{8}$/.test(hashHex)) bad(`${kind.idLabel} must be 8 lowercase hex digits`);
  const keyBytes = decodeStdBase64(keyB64);
  if (keyBytes === null) bad('key is not standard base64');
  if (keyBytes!.length !== 33 || keyBytes![0] !== kind.algorithm) bad(kind.algorithmError);
  const publicKey = keyBytes!.slice(1);
  const keyHash = parseInt(hashHex, 16);
  if (kind.keyHash(name, publicKey) !== keyHash) bad(`${kind.idLabel} does not match name and key`);
  return { name, keyHash, publicKey };
}

/** Detached Ed25519 signature (64 bytes). */
export function sign(key: SigningKey, message: Uint8Array): Uint8Array {
  return new Uint8Array(signWith(null, message, key.privateKey));
}

/**
 * Public keys already made into KeyObjects, by their hex: making one costs about as much as a
 * signature check, and a verifier checks many signatures under few keys. Bounded, because the
 * keys are sometimes the caller's (an evidence bundle's, a witness's).
 */
const publicKeyObjects = new Map<string, KeyObject>();
const MAX_CACHED_PUBLIC_KEYS = 64;

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const hex = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('hex');
  let key = publicKeyObjects.get(hex);
  if (key === undefined) {
    key = ed25519PublicKeyObject(publicKey);
    if (publicKeyObjects.size >= MAX_CACHED_PUBLIC_KEYS) publicKeyObjects.clear();
    publicKeyObjects.set(hex, key);
  }
  return key;
}

/** Verify a detached Ed25519 signature (RFC 8032); false for any malformed input. */
export function verifyDetached(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    return verifyWith(null, message, publicKeyObject(publicKey), signature);
  } catch {
    // A 32-byte string that is no point on the curve: OpenSSL refuses to make it a key.
    return false;
  }
}
