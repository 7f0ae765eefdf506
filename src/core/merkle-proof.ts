/**
 * RFC 9162 inclusion and consistency proofs (§2.1.3, §2.1.4): building them from perfect
 * subtree hashes, and verifying them. Pure: whoever holds the log supplies the hashes.
 *
 * Every node a proof names is the Merkle hash of a range D[lo:hi] of leaves, and every such
 * range splits into perfect, aligned subtrees (2^level leaves starting at a multiple of
 * 2^level). So building a proof is two steps: name the subtrees the ranges need
 * (`subtreesFor`), which lets a store fetch them in one go, then fold them (`inclusionProof`,
 * `consistencyProof`). The ranges follow the RFC's recursive definitions (PATH and SUBPROOF),
 * split at the largest power of two strictly below the size.
 *
 * Sizes may exceed 2^32, so no bit operators on them: halving is Math.floor(x / 2).
 */
import { emptyRoot, nodeHash } from './merkle.js';

/** A perfect aligned subtree: leaves [index * 2^level, (index + 1) * 2^level). */
export interface Subtree {
  level: number;
  index: number;
}

/** The hash of a perfect subtree; level 0 is the RFC 6962 leaf hash. */
export type SubtreeHash = (level: number, index: number) => Uint8Array;

/** A range [lo, hi) of leaves whose Merkle hash is one proof element. */
export type LeafRange = readonly [number, number];

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

function levelOf(size: number): number {
  let level = 0;
  for (let k = 1; k < size; k *= 2) level++;
  return level;
}

/** RFC 9162 PATH(m, D[n]): the ranges of the inclusion proof of leaf `index`, leaf side first. */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  checkSize(size);
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) throw new RangeError(`leaf index ${index} is not below tree size ${size}`);
  const out: LeafRange[] = [];
  const walk = (lo: number, hi: number): void => {
    if (hi - lo <= 1) return;
    const k = largestPowerOfTwoBelow(hi - lo);
    if (index < lo + k) {
      walk(lo, lo + k);
      out.push([lo + k, hi]);
    } else {
      walk(lo + k, hi);
      out.push([lo, lo + k]);
    }
  };
  walk(0, size);
  return out;
}

/** RFC 9162 PROOF(m, D[n]): the ranges of the consistency proof; empty when m is 0 or m = n. */
export function consistencyRanges(from: number, to: number): LeafRange[] {
  checkSize(to);
  if (!Number.isSafeInteger(from) || from < 0 || from > to) throw new RangeError(`old size ${from} is not within 0..${to}`);
  if (from === 0 || from === to) return [];
  const out: LeafRange[] = [];
  const sub = (m: number, lo: number, hi: number, whole: boolean): void => {
    const n = hi - lo;
    if (m === n) {
      if (!whole) out.push([lo, hi]);
      return;
    }
    const k = largestPowerOfTwoBelow(n);
    if (m <= k) {
      sub(m, lo, lo + k, whole);
      out.push([lo + k, hi]);
    } else {
      sub(m - k, lo + k, hi, false);
      out.push([lo, lo + k]);
    }
  };
  sub(from, 0, to, true);
  return out;
}

function checkSize(size: number): void {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`bad tree size ${size}`);
}

/** The perfect subtrees whose hashes make up the Merkle hash of [lo, hi). */
function coverOf(lo: number, hi: number, out: Subtree[]): void {
  const n = hi - lo;
  if (n <= 0) return;
  if (isPowerOfTwo(n) && lo % n === 0) {
    out.push({ level: levelOf(n), index: lo / n });
    return;
  }
  const k = largestPowerOfTwoBelow(n);
  coverOf(lo, lo + k, out);
  coverOf(lo + k, hi, out);
}

/** Every perfect subtree the given ranges need, without duplicates. */
export function subtreesFor(ranges: readonly LeafRange[]): Subtree[] {
  const all: Subtree[] = [];
  for (const [lo, hi] of ranges) coverOf(lo, hi, all);
  const seen = new Set<string>();
  return all.filter((s) => {
    const key = `${s.level}/${s.index}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** RFC 9162 MTH(D[lo:hi]) from perfect subtree hashes. */
export function rangeHash(lo: number, hi: number, subtree: SubtreeHash): Buffer {
  const n = hi - lo;
  if (n === 0) return emptyRoot();
  if (isPowerOfTwo(n) && lo % n === 0) return Buffer.from(subtree(levelOf(n), lo / n));
  const k = largestPowerOfTwoBelow(n);
  return nodeHash(rangeHash(lo, lo + k, subtree), rangeHash(lo + k, hi, subtree));
}

export function inclusionProof(index: number, size: number, subtree: SubtreeHash): Buffer[] {
  return inclusionRanges(index, size).map(([lo, hi]) => rangeHash(lo, hi, subtree));
}

export function consistencyProof(from: number, to: number, subtree: SubtreeHash): Buffer[] {
  return consistencyRanges(from, to).map(([lo, hi]) => rangeHash(lo, hi, subtree));
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

const odd = (n: number): boolean => n % 2 === 1;
const half = (n: number): number => Math.floor(n / 2);

/** RFC 9162 §2.1.3.2: does `proof` take leaf hash `leaf` at `index` to `root` of a tree of `size`? */
export function verifyInclusion(leaf: Uint8Array, index: number, size: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (leaf.length !== 32 || root.length !== 32 || proof.some((p) => p.length !== 32)) return false;
  let fn = index;
  let sn = size - 1;
  let r: Uint8Array = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equal(r, root);
}

/**
 * RFC 9162 §2.1.4.2, with the cases the algorithm leaves to the caller: from 0 is consistent
 * with anything (empty proof), from = to needs equal roots (empty proof).
 */
export function verifyConsistency(
  from: number, to: number, proof: readonly Uint8Array[], fromRoot: Uint8Array, toRoot: Uint8Array,
): boolean {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || from > to) return false;
  if (fromRoot.length !== 32 || toRoot.length !== 32 || proof.some((p) => p.length !== 32)) return false;
  if (from === 0) return proof.length === 0;
  if (from === to) return proof.length === 0 && equal(fromRoot, toRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Uint8Array = path[0]!;
  let sr: Uint8Array = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equal(fr, fromRoot) && equal(sr, toRoot);
}
