/**
 * RFC 6962 / RFC 9162 Merkle tree hashing over the event hashes.
 *
 *   leaf  = SHA-256(0x00 ‖ event hash, 32 raw bytes)
 *   node  = SHA-256(0x01 ‖ left ‖ right)
 *   MTH({}) = SHA-256("")
 *
 * The log keeps only the compact range of the right edge (MerkleFrontier): the roots of the
 * perfect subtrees that make up the tree, one per set bit of the size, largest (leftmost) first.
 *
 * Proofs (RFC 9162 §2.1.3, §2.1.4) are in merkle-proof.ts. They are built from perfect subtree
 * hashes; appendEventHashCollecting reports the ones an append completes, so the ledger can
 * store the large ones and never rebuild the tree to answer a proof.
 *
 * Speed: verify hashes ~3 SHA-256 per event here, so the hot path avoids Buffer allocation.
 * Digests are taken with the one-shot crypto.hash into a 32-character latin1 ("binary") string
 * (a Buffer digest costs ~2x, see bench/hash-choice.ts), inputs are assembled in reused scratch
 * buffers, and the frontier holds those strings. Buffers appear only at the API edges.
 */
import * as nodeCrypto from 'node:crypto';

type Encoding = 'hex' | 'binary'; // 'binary' is latin1
type OneShot = {
  (algorithm: string, data: string | Uint8Array, encoding: Encoding): string;
  (algorithm: string, data: string | Uint8Array, encoding: 'buffer'): Buffer;
};

/** crypto.hash (Node >= 20.12), with a createHash fallback for older Node 20. */
export const sha256Digest: OneShot = (
  typeof (nodeCrypto as { hash?: unknown }).hash === 'function'
    ? (nodeCrypto as unknown as { hash: OneShot }).hash
    : (algorithm: string, data: string | Uint8Array, encoding: Encoding | 'buffer') => {
        const h = nodeCrypto.createHash(algorithm).update(data);
        return encoding === 'buffer' ? h.digest() : h.digest(encoding);
      }
) as OneShot;

const leafScratch = Buffer.alloc(33); // [0] stays 0x00
const nodeScratch = Buffer.alloc(65);
nodeScratch[0] = 0x01;

/** 32 raw bytes as a latin1 string: the frontier's internal form. */
type BinHash = string;

const EMPTY_ROOT_BIN: BinHash = sha256Digest('sha256', new Uint8Array(0), 'binary');

function binToBuffer(b: BinHash): Buffer {
  return Buffer.from(b, 'latin1');
}

function nodeBin(left: BinHash, right: BinHash): BinHash {
  nodeScratch.write(left, 1, 32, 'latin1');
  nodeScratch.write(right, 33, 32, 'latin1');
  return sha256Digest('sha256', nodeScratch, 'binary');
}

/** RFC 6962 leaf hash of an event hash (exactly 32 raw bytes). */
export function leafHash(eventHash: Uint8Array): Buffer {
  if (eventHash.length !== 32) throw new RangeError(`leafHash: expected 32 bytes, got ${eventHash.length}`);
  leafScratch.set(eventHash, 1);
  return sha256Digest('sha256', leafScratch, 'buffer');
}

/** RFC 6962 interior node hash of two 32-byte hashes. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== 32 || right.length !== 32) throw new RangeError('nodeHash: expected two 32-byte hashes');
  nodeScratch.set(left, 1);
  nodeScratch.set(right, 33);
  return sha256Digest('sha256', nodeScratch, 'buffer');
}

/** MTH of the empty tree: SHA-256 of the empty string. */
export function emptyRoot(): Buffer {
  return binToBuffer(EMPTY_ROOT_BIN);
}

function popcount(n: number): number {
  let c = 0;
  // sizes may exceed 2^32, so no bit operators on n itself
  while (n > 0) {
    if (n % 2 === 1) c++;
    n = Math.floor(n / 2);
  }
  return c;
}

const HEX32 = /^[0-9a-f]{64}$/;

/** A perfect subtree an append completed: leaves [index * 2^level, (index + 1) * 2^level). */
export interface CompletedSubtree {
  level: number;
  index: number;
  hash: string;
}

/**
 * The incremental compact range of an append-only RFC 6962 tree: at most log2(n)+1 hashes.
 * Persisted in the chain-head row as `{ size, hashes: toJSON() }` and restored with `from`.
 */
export class MerkleFrontier {
  #size = 0;
  /** Perfect subtree roots (latin1 strings), largest first; one per set bit of size. */
  #stack: BinHash[] = [];
  /**
   * The same roots in hex once asked for (toJSON), undefined until then: the ledger writes the
   * frontier on every append, and an append changes only its last few roots.
   */
  #hex: Array<string | undefined> = [];

  get size(): number {
    return this.#size;
  }

  /** Append one leaf hash (the output of leafHash). */
  append(leaf: Uint8Array): void {
    if (leaf.length !== 32) throw new RangeError(`MerkleFrontier.append: expected 32 bytes, got ${leaf.length}`);
    this.#push(Buffer.from(leaf.buffer, leaf.byteOffset, 32).toString('latin1'));
  }

  /**
   * Append the leaf of an event given its hash in lowercase hex (leafHash computed here): the
   * fast path for the ledger and the verifier, which both hold the hex hash.
   */
  appendEventHash(eventHashHex: string): void {
    // Buffer#write stops at the first non-hex digit, so 32 bytes written means 64 hex digits
    // (either case): no regex on the hot path.
    if (typeof eventHashHex !== 'string' || eventHashHex.length !== 64 || leafScratch.write(eventHashHex, 1, 32, 'hex') !== 32) {
      throw new RangeError('MerkleFrontier.appendEventHash: expected 64 hex digits');
    }
    this.#push(sha256Digest('sha256', leafScratch, 'binary'));
  }

  /**
   * Append a perfect subtree of 2^level leaves, given as its root (32 bytes at `offset` in
   * `hashes`, from SubtreeRange): the parallel verifier's path, where a worker thread hashed
   * the subtree. Only at a size it is aligned to (a multiple of 2^level): there its root is
   * the node the tree itself has over those leaves, so the frontier comes out as if each leaf
   * had been appended.
   */
  appendSubtreeAt(level: number, hashes: Buffer, offset: number): void {
    if (!Number.isInteger(level) || level < 0 || level > 52) throw new RangeError(`MerkleFrontier.appendSubtreeAt: bad level ${level}`);
    if (offset < 0 || offset + 32 > hashes.length) throw new RangeError('MerkleFrontier.appendSubtreeAt: offset out of range');
    const width = 2 ** level;
    if (this.#size % width !== 0) throw new RangeError(`MerkleFrontier.appendSubtreeAt: size ${this.#size} is not a multiple of 2^${level}`);
    // As #push, one level up per trailing 1 bit of size / 2^level.
    let h = hashes.toString('latin1', offset, offset + 32);
    let s = this.#size / width;
    while (s % 2 === 1) {
      h = nodeBin(this.#stack.pop()!, h);
      this.#hex.pop();
      s = (s - 1) / 2;
    }
    this.#stack.push(h);
    this.#hex.push(undefined);
    this.#size += width;
  }

  /**
   * appendEventHash, returning the perfect subtrees of at least `minLevel` levels (2^minLevel
   * leaves) that this leaf completes, as { level, index, hash (hex) }: usually none.
   */
  appendEventHashCollecting(eventHashHex: string, minLevel: number): CompletedSubtree[] {
    if (typeof eventHashHex !== 'string' || eventHashHex.length !== 64 || leafScratch.write(eventHashHex, 1, 32, 'hex') !== 32) {
      throw new RangeError('MerkleFrontier.appendEventHashCollecting: expected 64 hex digits');
    }
    const completed: CompletedSubtree[] = [];
    const newSize = this.#size + 1;
    this.#push(sha256Digest('sha256', leafScratch, 'binary'), (level, h) => {
      if (level >= minLevel) completed.push({ level, index: newSize / 2 ** level - 1, hash: binToBuffer(h).toString('hex') });
    });
    return completed;
  }

  #push(leaf: BinHash, completed?: (level: number, hash: BinHash) => void): void {
    // One merge per trailing 1 bit of the old size: equal-sized subtrees combine.
    let h = leaf;
    let s = this.#size;
    let level = 0;
    while (s % 2 === 1) {
      h = nodeBin(this.#stack.pop()!, h);
      this.#hex.pop();
      s = (s - 1) / 2;
      if (completed !== undefined) completed(++level, h);
    }
    this.#stack.push(h);
    this.#hex.push(undefined);
    this.#size++;
  }

  /** RFC 6962 MTH of the leaves appended so far. */
  root(): Buffer {
    return binToBuffer(this.#rootBin());
  }

  /** The root in lowercase hex. */
  rootHex(): string {
    return binToBuffer(this.#rootBin()).toString('hex');
  }

  #rootBin(): BinHash {
    const stack = this.#stack;
    if (stack.length === 0) return EMPTY_ROOT_BIN;
    let r = stack[stack.length - 1]!;
    for (let i = stack.length - 2; i >= 0; i--) r = nodeBin(stack[i]!, r);
    return r;
  }

  /** The frontier hashes in lowercase hex, largest subtree first. */
  toJSON(): string[] {
    const hex = this.#hex;
    for (let i = 0; i < hex.length; i++) hex[i] ??= binToBuffer(this.#stack[i]!).toString('hex');
    return hex.slice() as string[];
  }

  /** Restore a frontier saved as `size` and `toJSON()`. */
  static from(size: number, hexes: readonly string[]): MerkleFrontier {
    if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`MerkleFrontier.from: bad size ${size}`);
    if (!Array.isArray(hexes) || hexes.length !== popcount(size)) {
      throw new RangeError(`MerkleFrontier.from: size ${size} needs ${popcount(size)} hashes, got ${hexes?.length}`);
    }
    const f = new MerkleFrontier();
    for (const hex of hexes) {
      if (typeof hex !== 'string' || !HEX32.test(hex)) throw new RangeError('MerkleFrontier.from: hashes must be 64 lowercase hex digits');
      f.#stack.push(Buffer.from(hex, 'hex').toString('latin1'));
      f.#hex.push(hex);
    }
    f.#size = size;
    return f;
  }

  /** An independent copy. */
  clone(): MerkleFrontier {
    const f = new MerkleFrontier();
    f.#stack = [...this.#stack];
    f.#hex = [...this.#hex];
    f.#size = this.#size;
    return f;
  }
}

/**
 * The perfect subtrees of the global tree that cover a run of leaves starting at any position
 * `start`: what a worker thread of the parallel verifier hashes for its slice, so the thread
 * that owns the frontier appends a few subtree roots (MerkleFrontier.appendSubtreeAt) instead
 * of every leaf and the nodes above it. A subtree is only ever closed when it is aligned in
 * the global tree (its first leaf a multiple of its width), which is what makes its root the
 * global tree's node over those leaves; the run's head and tail come out as smaller subtrees.
 *
 * take() hands over the subtrees so far, in leaf order, and starts a new run where this one
 * ended: the owner can then stop at exactly that size (a checkpoint's) and compute the root.
 */
export class SubtreeRange {
  /** Position (global leaf index) of the next leaf. */
  #end: number;
  /** Open subtrees, leftmost first: their roots and levels. */
  readonly #hashes: BinHash[] = [];
  readonly #levels: number[] = [];

  constructor(start: number) {
    if (!Number.isSafeInteger(start) || start < 0) throw new RangeError(`SubtreeRange: bad start ${start}`);
    this.#end = start;
  }

  /** Subtrees held (for take()'s buffer). */
  get count(): number {
    return this.#levels.length;
  }

  /** Append the leaf of an event given its hash in hex (as MerkleFrontier.appendEventHash). */
  appendEventHash(eventHashHex: string): void {
    if (typeof eventHashHex !== 'string' || eventHashHex.length !== 64 || leafScratch.write(eventHashHex, 1, 32, 'hex') !== 32) {
      throw new RangeError('SubtreeRange.appendEventHash: expected 64 hex digits');
    }
    let h = sha256Digest('sha256', leafScratch, 'binary');
    const hashes = this.#hashes;
    const levels = this.#levels;
    let level = 0;
    // The block [q * 2^level, (q + 1) * 2^level) merges with its left neighbour only when that
    // neighbour is its sibling in the global tree (q odd) and is held here whole (same level).
    let q = this.#end;
    while (q % 2 === 1 && levels.length > 0 && levels[levels.length - 1] === level) {
      h = nodeBin(hashes.pop()!, h);
      levels.pop();
      q = (q - 1) / 2;
      level++;
    }
    hashes.push(h);
    levels.push(level);
    this.#end++;
  }

  /**
   * Write the subtrees held (leftmost first) into `levels` and `hashes` (32 bytes each) from
   * index `at`, and start a new run at the current end. Returns the number written.
   */
  take(levels: Uint8Array, hashes: Buffer, at: number): number {
    const n = this.#levels.length;
    if (at < 0 || at + n > levels.length || (at + n) * 32 > hashes.length) throw new RangeError('SubtreeRange.take: buffers too small');
    for (let i = 0; i < n; i++) {
      levels[at + i] = this.#levels[i]!;
      hashes.write(this.#hashes[i]!, (at + i) * 32, 32, 'latin1');
    }
    this.#levels.length = 0;
    this.#hashes.length = 0;
    return n;
  }
}
