import crypto from 'node:crypto';

// One-shot crypto.hash with a string digest measured 2-3x faster than createHash
// on event-sized inputs (bench/hash-choice.ts, BENCHMARKS.md).

/** SHA-256; a string is hashed as its UTF-8 bytes. */
export function sha256(data: Uint8Array | string): Uint8Array {
  const digest = crypto.createHash('sha256').update(data).digest();
  // A plain Uint8Array, not a Buffer, so equality checks and callers see one type.
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
}

/** Lowercase hex SHA-256; a string is hashed as its UTF-8 bytes. */
export function sha256Hex(data: Uint8Array | string): string {
  return crypto.hash('sha256', data, 'hex');
}
