import crypto from 'node:crypto';

// One-shot crypto.hash with a string digest measured 2-3x faster than createHash
// on event-sized inputs (bench/hash-choice.ts, BENCHMARKS.md).

/** Lowercase hex SHA-256; a string is hashed as its UTF-8 bytes. */
export function sha256Hex(data: Uint8Array | string): string {
  return crypto.hash('sha256', data, 'hex');
}

/**
 * Equal strings, compared in time that does not depend on where they differ (secrets, their
 * digests, tokens): the one comparison for anything an attacker could probe byte by byte.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}
