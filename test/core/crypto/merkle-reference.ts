// Test-only reference implementations, written independently of src/core/merkle.ts
// (@noble/hashes instead of node:crypto, plain recursion instead of a compact range).
import { sha256 } from '@noble/hashes/sha2.js';

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** RFC 6962 §2.1 MTH over already-hashed leaves: the largest power of two strictly below n splits. */
export function rootOfLeaves(leaves: Uint8Array[]): Uint8Array {
  const n = leaves.length;
  if (n === 0) return sha256(new Uint8Array(0));
  if (n === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return sha256(concat(Uint8Array.of(1), rootOfLeaves(leaves.slice(0, k)), rootOfLeaves(leaves.slice(k))));
}

export function refLeafHash(data: Uint8Array): Uint8Array {
  return sha256(concat(Uint8Array.of(0), data));
}

export function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}
