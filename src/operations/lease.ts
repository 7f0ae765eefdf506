import { randomBytes } from '../core/random.js';
import { constantTimeEqual, sha256Hex } from '../core/hash.js';
import { rfc3339 } from '../core/time.js';

export interface Lease {
  token: string;
  expires_at: string;
}

export interface IssuedLease {
  lease: Lease;
  /** Only the hash is stored: a database reader cannot impersonate the lease holder. */
  tokenHash: string;
  expiresAtMs: number;
}

/** A fresh lease: 256 random bits, base64url. A new lease supersedes (fences off) the previous holder. */
export function issueLease(nowMs: number, leaseSeconds: number): IssuedLease {
  const token = randomBytes(32).toString('base64url');
  const expiresAtMs = nowMs + leaseSeconds * 1000;
  return { lease: { token, expires_at: rfc3339(expiresAtMs) }, tokenHash: sha256Hex(token), expiresAtMs };
}

/** Constant-time: the comparison must not tell a zombie how much of a token it guessed. */
export function leaseTokenMatches(presented: string, storedHash: string | null): boolean {
  if (storedHash === null) return false;
  return constantTimeEqual(sha256Hex(presented), storedHash);
}

/** `Retry-After` for an operation in progress: whole seconds until its lease runs out, at least 1. */
export function retryAfterSeconds(leaseExpiresAtMs: number | null, nowMs: number): number {
  if (leaseExpiresAtMs === null) return 1;
  return Math.max(1, Math.ceil((leaseExpiresAtMs - nowMs) / 1000));
}
