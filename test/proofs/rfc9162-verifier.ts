// Test-only verifiers of RFC 9162 proofs, written from the RFC's text (§2.1.3.2, §2.1.4.2)
// separately from src/core/merkle-proof.ts: BigInt bit operations and @noble/hashes, so a
// mistake shared with the product's verifier cannot hide.
import { sha256 } from '@noble/hashes/sha2.js';

function node(left: Uint8Array, right: Uint8Array): Uint8Array {
  const buf = new Uint8Array(65);
  buf[0] = 1;
  buf.set(left, 1);
  buf.set(right, 33);
  return sha256(buf);
}

export function leafOf(eventHashHex: string): Uint8Array {
  const buf = new Uint8Array(33);
  buf.set(Buffer.from(eventHashHex, 'hex'), 1);
  return sha256(buf);
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
const lsb = (n: bigint) => (n & 1n) === 1n;

/** §2.1.3.2 "Verifying an Inclusion Proof", step by step. */
export function rfcVerifyInclusion(leafIndex: number, treeSize: number, hash: Uint8Array, path: Uint8Array[], rootHash: Uint8Array): boolean {
  if (leafIndex >= treeSize) return false;
  let fn = BigInt(leafIndex);
  let sn = BigInt(treeSize - 1);
  let r = hash;
  for (const p of path) {
    if (sn === 0n) return false;
    if (lsb(fn) || fn === sn) {
      r = node(p, r);
      if (!lsb(fn)) while (!lsb(fn) && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      r = node(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && same(r, rootHash);
}

/** §2.1.4.2 "Verifying Consistency between Two Tree Heads" (for 0 < first < second). */
export function rfcVerifyConsistency(first: number, second: number, firstHash: Uint8Array, secondHash: Uint8Array, consistency: Uint8Array[]): boolean {
  if (consistency.length === 0) return false;
  const path = [...consistency];
  if ((BigInt(first) & BigInt(first - 1)) === 0n) path.unshift(firstHash);
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  if (lsb(fn)) while (lsb(fn)) { fn >>= 1n; sn >>= 1n; }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if (lsb(fn) || fn === sn) {
      fr = node(c, fr);
      sr = node(c, sr);
      if (!lsb(fn)) while (!lsb(fn) && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      sr = node(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return same(fr, firstHash) && same(sr, secondHash) && sn === 0n;
}
