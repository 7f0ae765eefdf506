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

/**
 * Write the RFC 6962 leaf hash of an event hash given in hex (64 hex digits) into `out` at
 * `offset` (32 bytes): what a worker thread sends the frontier's owner (appendLeafAt).
 */
export function writeEventLeaf(eventHashHex: string, out: Buffer, offset: number): void {
  if (typeof eventHashHex !== 'string' || eventHashHex.length !== 64 || leafScratch.write(eventHashHex, 1, 32, 'hex') !== 32) {
    throw new RangeError('writeEventLeaf: expected 64 hex digits');
  }
  out.write(sha256Digest('sha256', leafScratch, 'binary'), offset, 32, 'latin1');
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

  /** Append the leaf hash (32 bytes, from writeEventLeaf) at `offset` in `leaves`: the parallel verifier's path. */
  appendLeafAt(leaves: Buffer, offset: number): void {
    if (offset < 0 || offset + 32 > leaves.length) throw new RangeError('MerkleFrontier.appendLeafAt: offset out of range');
    this.#push(leaves.toString('latin1', offset, offset + 32));
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
      s = (s - 1) / 2;
      if (completed !== undefined) completed(++level, h);
    }
    this.#stack.push(h);
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
    return this.#stack.map((h) => binToBuffer(h).toString('hex'));
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
    }
    f.#size = size;
    return f;
  }

  /** An independent copy. */
  clone(): MerkleFrontier {
    const f = new MerkleFrontier();
    f.#stack = [...this.#stack];
    f.#size = this.#size;
    return f;
  }
}
