// Grant verification in the gateway, before a write runs on an approved operation:
// Ed25519 over the JCS of the grant's other fields, against public keys pinned out of band.
import { verify, type KeyObject } from 'node:crypto';
import { canonicalize } from '../core/jcs.js';
import { ed25519PublicKeyObject } from '../core/signing-key.js';
import type { JsonObject } from '../core/json.js';
import { GrantVerificationError } from './errors.js';
import type { Grant, SigningKey } from './types.js';

/**
 * Public keys the gateway trusts, by key id. Accepts what `GET /v1/keys` answers (the object or
 * its `keys` array, saved to a file at deployment) or a plain `{ key_id: base64 raw key }` map.
 */
export type PinnedKeysInput = Record<string, string> | SigningKey[] | { keys: SigningKey[] };

export class PinnedKeys {
  readonly #keys = new Map<string, KeyObject>();

  constructor(input: PinnedKeysInput) {
    const entries: Array<[string, string]> = [];
    if (Array.isArray(input)) {
      for (const k of input) entries.push([k.key_id, rawKeyOf(k)]);
    } else if (isKeysDocument(input)) {
      for (const k of input.keys) entries.push([k.key_id, rawKeyOf(k)]);
    } else {
      for (const [id, raw] of Object.entries(input)) entries.push([id, raw]);
    }
    for (const [id, raw] of entries) this.#keys.set(id, ed25519PublicKey(raw));
  }

  get size(): number {
    return this.#keys.size;
  }

  get(keyId: string): KeyObject | undefined {
    return this.#keys.get(keyId);
  }
}

function isKeysDocument(input: PinnedKeysInput): input is { keys: SigningKey[] } {
  return !Array.isArray(input) && Array.isArray((input as { keys?: unknown }).keys);
}

function rawKeyOf(k: SigningKey): string {
  for (const name of ['public_key', 'public_key_base64', 'raw_public_key', 'ed25519', 'key']) {
    const v = k[name];
    if (typeof v === 'string') return v;
  }
  throw new TypeError(`signing key ${k.key_id} has no raw public key`);
}

/** A node:crypto public key from a raw 32-byte Ed25519 key in base64 or base64url. */
export function ed25519PublicKey(rawBase64: string): KeyObject {
  const raw = Buffer.from(rawBase64, 'base64');
  if (raw.length !== 32) throw new TypeError(`an Ed25519 public key is 32 bytes, got ${raw.length}`);
  return ed25519PublicKeyObject(raw);
}

export interface GrantExpectation {
  operation_id: string;
  account_id: string;
  idempotency_key: string;
  fingerprint: string;
}

/**
 * Throws GrantVerificationError unless the grant is signed by a pinned key, covers exactly this
 * operation (id, account, key, fingerprint) and has not expired at `nowMs`.
 */
export function verifyGrant(grant: Grant, pinned: PinnedKeys, expected: GrantExpectation, nowMs = Date.now()): void {
  if (!grant || typeof grant !== 'object') throw new GrantVerificationError('no grant on an approved operation');
  const { signature, ...signed } = grant;
  if (typeof signature !== 'string' || !/^[A-Za-z0-9_-]+$/.test(signature)) {
    throw new GrantVerificationError('grant signature is not base64url');
  }
  const key = pinned.get(grant.key_id);
  if (!key) throw new GrantVerificationError(`grant signed by key ${JSON.stringify(grant.key_id)}, which is not pinned`);
  let message: string;
  try {
    message = canonicalize(signed as unknown as JsonObject);
  } catch (err) {
    throw new GrantVerificationError(`grant is not canonicalizable JSON: ${(err as Error).message}`);
  }
  const sig = Buffer.from(signature, 'base64url');
  if (sig.length !== 64 || !verify(null, Buffer.from(message, 'utf8'), key, sig)) {
    throw new GrantVerificationError('grant signature does not verify');
  }
  for (const field of ['operation_id', 'account_id', 'idempotency_key', 'fingerprint'] as const) {
    if (grant[field] !== expected[field]) {
      throw new GrantVerificationError(`grant ${field} ${JSON.stringify(grant[field])} is not the operation's ${JSON.stringify(expected[field])}`);
    }
  }
  const expires = Date.parse(grant.expires_at);
  if (!Number.isFinite(expires)) throw new GrantVerificationError('grant expires_at is not a timestamp');
  if (expires <= nowMs) throw new GrantVerificationError(`grant expired at ${grant.expires_at}`);
}
