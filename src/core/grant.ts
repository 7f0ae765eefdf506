/**
 * The approval grant (docs/formats.md#grants): proof that named approvers authorised one exact
 * command — one operation, one fingerprint — until `expires_at`.
 *
 *   signature = base64url(Ed25519(JCS(grant without `signature`)))   (no padding)
 *
 * Pure: no Koa, no Kysely. The ledger signs with its libsodium key; anyone can
 * check with the raw public key from `GET /v1/keys`.
 */
import { canonicalBytes } from './jcs.js';
import type { JsonObject } from './json.js';
import { sign, verifyDetached, type SigningKey } from './signing-key.js';

export interface GrantFields {
  approval_id: string;
  operation_id: string;
  account_id: string;
  idempotency_key: string;
  fingerprint: string;
  approved_by: string[];
  approved_at: string;
  expires_at: string;
}

export interface SignedGrant extends GrantFields {
  key_id: string;
  signature: string;
}

/** A public key as `GET /v1/keys` lists it: `public_key` is the raw 32 bytes in base64. */
export interface GrantPublicKey {
  key_id: string;
  public_key: string;
}

export function signGrant(key: SigningKey, fields: GrantFields): SignedGrant {
  const unsigned = { ...fields, approved_by: [...fields.approved_by], key_id: key.keyId };
  const signature = Buffer.from(sign(key, canonicalBytes(unsigned as unknown as JsonObject))).toString('base64url');
  return { ...unsigned, signature };
}

/**
 * True when the grant is signed by one of `publicKeys` (matched by key id) over exactly
 * its other fields. Expiry and the operation it covers are the caller's to compare.
 */
export function verifyGrant(grant: SignedGrant, publicKeys: GrantPublicKey[]): boolean {
  // Untrusted input: anything malformed is simply "not verified".
  try {
    const { signature, ...signed } = grant;
    if (typeof signature !== 'string' || !/^[A-Za-z0-9_-]{86}$/.test(signature)) return false;
    const key = publicKeys.find((k) => k.key_id === grant.key_id);
    if (!key) return false;
    const raw = Buffer.from(key.public_key, 'base64');
    return verifyDetached(new Uint8Array(raw), canonicalBytes(signed as unknown as JsonObject), new Uint8Array(Buffer.from(signature, 'base64url')));
  } catch {
    return false;
  }
}
