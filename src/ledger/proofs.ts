/**
 * Inclusion and consistency proofs of one account's log (the contract's proof routes,
 * `gatehouse prove`, and the consistency proofs sent to witnesses), from the stored Merkle
 * data (merkle-nodes.ts). Sizes beyond the log are the caller's mistake: invalid_request.
 */
import { consistencyRanges, inclusionRanges, rangeHash, subtreesFor, type LeafRange } from '../core/merkle-proof.js';
import { DomainError } from '../core/errors.js';
import type { Db } from '../store/store.js';
import { fetchSubtrees } from './merkle-nodes.js';

export interface InclusionProofJson {
  account_id: string;
  seq: number;
  tree_size: number;
  leaf_index: number;
  hashes: string[];
}

export interface ConsistencyProofJson {
  account_id: string;
  from: number;
  to: number;
  hashes: string[];
}

/** Committed events of the account (0 when it has none). */
export async function logSize(db: Db, accountId: string): Promise<number> {
  const row = await db.selectFrom('chains').select('size').where('account_id', '=', accountId).executeTakeFirst();
  return row === undefined ? 0 : Number(row.size);
}

/** The hash of each leaf range, from the stored subtrees and event hashes (not from the chain's frontier). */
export async function storedRangeHashes(db: Db, accountId: string, ranges: LeafRange[]): Promise<Buffer[]> {
  const subtree = await fetchSubtrees(db, accountId, subtreesFor(ranges));
  return ranges.map(([lo, hi]) => rangeHash(lo, hi, subtree));
}

async function hashesOf(db: Db, accountId: string, ranges: LeafRange[]): Promise<string[]> {
  return (await storedRangeHashes(db, accountId, ranges)).map((hash) => hash.toString('hex'));
}

export async function inclusionProofOf(db: Db, accountId: string, seq: number, treeSize: number): Promise<InclusionProofJson> {
  const size = await logSize(db, accountId);
  if (treeSize < 1 || treeSize > size) {
    throw new DomainError('invalid_request', `tree_size ${treeSize} is not within 1..${size}, the events of account ${accountId}`);
  }
  if (seq < 1 || seq > treeSize) throw new DomainError('invalid_request', `seq ${seq} is not within 1..${treeSize} (tree_size)`);
  const hashes = await hashesOf(db, accountId, inclusionRanges(seq - 1, treeSize));
  return { account_id: accountId, seq, tree_size: treeSize, leaf_index: seq - 1, hashes };
}

export async function consistencyProofOf(db: Db, accountId: string, from: number, to: number): Promise<ConsistencyProofJson> {
  const size = await logSize(db, accountId);
  if (to > size) throw new DomainError('invalid_request', `to ${to} is beyond the ${size} events of account ${accountId}`);
  if (from > to) throw new DomainError('invalid_request', `from ${from} is greater than to ${to}`);
  const hashes = await hashesOf(db, accountId, consistencyRanges(from, to));
  return { account_id: accountId, from, to, hashes };
}
