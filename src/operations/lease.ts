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

/**
 * How long a retry of an operation in progress should wait before asking again (docs/retry-contract.md).
 * Most writes finish in milliseconds: the lease length (60 s by default) would make a client
 * that obeys the header wait a minute for nothing. Asking again costs one cheap claim.
 */
export const IN_PROGRESS_RETRY_HINT_SECONDS = 1;

/** `Retry-After` for an operation in progress: a short hint in whole seconds, at least 1, never past the lease's end. */
export function retryAfterSeconds(leaseExpiresAtMs: number | null, nowMs: number, hintSeconds = IN_PROGRESS_RETRY_HINT_SECONDS): number {
  const hint = Math.max(1, Math.floor(hintSeconds));
  if (leaseExpiresAtMs === null) return hint;
  return Math.max(1, Math.min(hint, Math.ceil((leaseExpiresAtMs - nowMs) / 1000)));
}
