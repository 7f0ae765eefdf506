/**
 * C2SP tlog-cosignature, the Ed25519 "cosignature/v1" kind (signed-note signature type 0x04):
 * what a witness adds to a checkpoint it verified was consistent with everything it cosigned
 * before for that log.
 *
 *   signed message = "cosignature/v1\n" + "time <unix seconds>\n" + checkpoint body
 *   signature line = "— <witness name> " + base64(key ID ‖ u64 big-endian timestamp ‖ 64-byte signature)
 *   key ID         = SHA-256(name ‖ "\n" ‖ 0x04 ‖ 32-byte public key)[:4]
 *   verifier key   = <name>+<hex key ID>+base64(0x04 ‖ public key)
 *
 * The message does not commit to the witness name, so one key must never serve two names.
 */
import { createHash } from 'node:crypto';
import { SIG_PREFIX, splitNote } from './note.js';
import { type SigningKey, SigningKeyError, decodeStdBase64, isValidKeyName, parseVerifierKeyText, sign, verifyDetached } from './signing-key.js';

export const ALG_COSIGNATURE_V1 = 0x04;
const MAX_TIMESTAMP = (1n << 63n) - 1n;
const utf8 = new TextEncoder();

/** A witness as a verifier knows it. */
export interface CosignerKey {
  name: string;
  /** The 4-byte key ID as an unsigned 32-bit integer. */
  keyHash: number;
  publicKey: Uint8Array;
  /** The verifier key text it was parsed from (or would be written as). */
  text: string;
}

export function cosignerKeyHash(name: string, publicKey: Uint8Array): number {
  return createHash('sha256').update(name, 'utf8').update('\n').update(Uint8Array.of(ALG_COSIGNATURE_V1)).update(publicKey).digest().readUInt32BE(0);
}

/** `<name>+<hex key ID>+<base64(0x04 ‖ public key)>`. */
export function cosignerVerifierText(name: string, publicKey: Uint8Array): string {
  if (!isValidKeyName(name)) throw new SigningKeyError(`invalid witness name ${JSON.stringify(name)}`);
  const material = Buffer.concat([Uint8Array.of(ALG_COSIGNATURE_V1), publicKey]).toString('base64');
  return `${name}+${cosignerKeyHash(name, publicKey).toString(16).padStart(8, '0')}+${material}`;
}

export function cosignerKey(name: string, publicKey: Uint8Array): CosignerKey {
  return { name, keyHash: cosignerKeyHash(name, publicKey), publicKey, text: cosignerVerifierText(name, publicKey) };
}

/** Parse a witness verifier key (type 0x04 only); throws SigningKeyError naming what is wrong. */
export function parseCosignerVerifier(text: string): CosignerKey {
  const { name, publicKey } = parseVerifierKeyText(text, {
    what: 'witness verifier key', idLabel: 'key id', algorithm: ALG_COSIGNATURE_V1,
    algorithmError: 'not a cosignature/v1 key (0x04 ‖ 32-byte Ed25519 key)', keyHash: cosignerKeyHash,
  });
  return cosignerKey(name, publicKey);
}

export function cosignatureMessage(body: string, timestamp: bigint | number): Uint8Array {
  return utf8.encode(`cosignature/v1\ntime ${BigInt(timestamp).toString()}\n${body}`);
}

/** The cosignature line (no newline) of `key`, named `name`, over a checkpoint body at `timestamp` (unix seconds). */
export function cosign(body: string, name: string, key: SigningKey, timestamp: number): string {
  if (!Number.isSafeInteger(timestamp) || timestamp <= 0) throw new RangeError(`bad cosignature timestamp ${timestamp}`);
  const blob = Buffer.alloc(4 + 8 + 64);
  blob.writeUInt32BE(cosignerKeyHash(name, key.publicKey), 0);
  blob.writeBigUInt64BE(BigInt(timestamp), 4);
  blob.set(sign(key, cosignatureMessage(body, timestamp)), 12);
  return `${SIG_PREFIX}${name} ${blob.toString('base64')}`;
}

export interface CosignatureCheck {
  /** Verifier keys (text) of the witnesses with a valid cosignature. */
  valid: string[];
  /** Verifier keys of known witnesses whose cosignature line is there but does not verify. */
  invalid: string[];
}

/**
 * The cosignatures on a signed note by the given witnesses. Lines by other keys (the log's own
 * signature, unknown witnesses) are ignored, as the signed-note spec requires; a known
 * witness counts once however many lines it has.
 */
export function checkCosignatures(note: string, witnesses: readonly CosignerKey[]): CosignatureCheck {
  const parts = splitNote(note);
  if (parts === null) return { valid: [], invalid: [] };
  const { body } = parts;
  const valid = new Set<string>();
  const invalid = new Set<string>();
  for (const line of parts.signatureLines) {
    if (!line.startsWith(SIG_PREFIX)) continue;
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    if (space < 0) continue;
    const name = rest.slice(0, space);
    const blob = decodeStdBase64(rest.slice(space + 1), false);
    if (blob === null || blob.length < 4) continue;
    const keyHash = Buffer.from(blob.buffer, blob.byteOffset, blob.length).readUInt32BE(0);
    const witness = witnesses.find((w) => w.name === name && w.keyHash === keyHash);
    if (witness === undefined) continue;
    if (lineVerifies(blob, body, witness)) valid.add(witness.text);
    else invalid.add(witness.text);
  }
  return { valid: [...valid], invalid: [...invalid].filter((w) => !valid.has(w)) };
}

function lineVerifies(blob: Uint8Array, body: string, witness: CosignerKey): boolean {
  if (blob.length !== 4 + 8 + 64) return false;
  const timestamp = Buffer.from(blob.buffer, blob.byteOffset, blob.length).readBigUInt64BE(4);
  if (timestamp > MAX_TIMESTAMP) return false;
  return verifyDetached(witness.publicKey, cosignatureMessage(body, timestamp), blob.subarray(12));
}
