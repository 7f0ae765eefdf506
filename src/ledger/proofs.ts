/**
 * Inclusion and consistency proofs of one account's log (the contract's proof routes,
 * `gatehouse prove`, and the consistency proofs sent to witnesses), from the stored Merkle
 * data (merkle-nodes.ts). Sizes beyond the log are the caller's mistake: invalid_request, made
 * by the caller's `refuse` so it can say where the number came from (the proof routes: a query
 * parameter).
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

/** The refusal of an input (`seq`, `tree_size`, `from`, `to`) with what is wrong with it. */
export type RefuseInput = (name: string, problem: string) => Error;

const refuseInput: RefuseInput = (name, problem) => new DomainError('invalid_request', `${name} ${problem}`);

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

export async function inclusionProofOf(db: Db, accountId: string, seq: number, treeSize: number, refuse = refuseInput): Promise<InclusionProofJson> {
  const size = await logSize(db, accountId);
  if (treeSize < 1 || treeSize > size) {
    throw refuse('tree_size', `must be within 1..${size}, the events of account ${accountId}, not ${treeSize}`);
  }
  if (seq < 1 || seq > treeSize) throw refuse('seq', `must be within 1..${treeSize} (tree_size), not ${seq}`);
  const hashes = await hashesOf(db, accountId, inclusionRanges(seq - 1, treeSize));
  return { account_id: accountId, seq, tree_size: treeSize, leaf_index: seq - 1, hashes };
}

export async function consistencyProofOf(db: Db, accountId: string, from: number, to: number, refuse = refuseInput): Promise<ConsistencyProofJson> {
  const size = await logSize(db, accountId);
  if (to > size) throw refuse('to', `must be at most ${size}, the events of account ${accountId}, not ${to}`);
  if (from > to) throw refuse('from', `must be at most to (${to}), not ${from}`);
  const hashes = await hashesOf(db, accountId, consistencyRanges(from, to));
  return { account_id: accountId, from, to, hashes };
}
