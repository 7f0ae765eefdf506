/**
 * The stored Merkle data proofs are built from: event hashes (the leaves, in `events`) and the
 * hash of every perfect subtree of 2^STORED_LEVEL leaves or more (`merkle_nodes`, written by
 * the append that completes it). A proof of a 1,000,000-event account needs about a dozen
 * stored subtrees plus at most two runs of 256 event hashes: a few indexed reads, no rebuild.
 */
import type { CompletedSubtree } from '../core/merkle.js';
import { MerkleFrontier } from '../core/merkle.js';
import type { Subtree, SubtreeHash } from '../core/merkle-proof.js';
import type { Db } from '../store/store.js';

/** Subtrees of 256 leaves and up are stored: ~2 rows per 256 events; smaller ones come from event hashes. */
export const STORED_LEVEL = 8;

export async function storeSubtrees(trx: Db, accountId: string, subtrees: CompletedSubtree[]): Promise<void> {
  await trx.insertInto('merkle_nodes')
    .values(subtrees.map((s) => ({ account_id: accountId, level: s.level, idx: s.index, hash: s.hash })))
    .onConflict((oc) => oc.columns(['account_id', 'level', 'idx']).doNothing())
    .execute();
}

const key = (level: number, index: number): string => `${level}/${index}`;

/**
 * Fetches the hashes of `subtrees` of one account: large ones from `merkle_nodes`, the rest
 * (and any large one missing, as in a log written before the table existed) from the event
 * hashes under them. The caller has checked that every subtree lies within the log.
 */
export async function fetchSubtrees(db: Db, accountId: string, subtrees: readonly Subtree[]): Promise<SubtreeHash> {
  const hashes = new Map<string, Buffer>();
  const large = subtrees.filter((s) => s.level >= STORED_LEVEL);
  if (large.length > 0) {
    const rows = await db.selectFrom('merkle_nodes').select(['level', 'idx', 'hash'])
      .where('account_id', '=', accountId)
      .where((eb) => eb.or(large.map((s) => eb.and([eb('level', '=', s.level), eb('idx', '=', s.index)]))))
      .execute();
    for (const row of rows) hashes.set(key(Number(row.level), Number(row.idx)), Buffer.from(row.hash, 'hex'));
  }
  const fromLeaves = subtrees.filter((s) => !hashes.has(key(s.level, s.index)));
  for (const run of leafRuns(fromLeaves)) {
    const rows = await db.selectFrom('events').select(['seq', 'hash'])
      .where('account_id', '=', accountId).where('seq', '>', run.lo).where('seq', '<=', run.hi).orderBy('seq').execute();
    if (rows.length !== run.hi - run.lo) throw new Error(`events ${run.lo + 1}..${run.hi} of ${accountId} are not all stored`);
    for (const s of run.subtrees) {
      const width = 2 ** s.level;
      const frontier = new MerkleFrontier();
      const first = s.index * width - run.lo;
      for (let i = first; i < first + width; i++) frontier.appendEventHash(rows[i]!.hash);
      hashes.set(key(s.level, s.index), frontier.root());
    }
  }
  return (level, index) => {
    const hash = hashes.get(key(level, index));
    if (hash === undefined) throw new Error(`subtree ${level}/${index} was not fetched`);
    return hash;
  };
}

interface LeafRun {
  /** Leaves (lo, hi] by seq, i.e. indexes [lo, hi). */
  lo: number;
  hi: number;
  subtrees: Subtree[];
}

/** Subtrees grouped into runs of adjacent or overlapping leaf ranges: one query per run. */
function leafRuns(subtrees: readonly Subtree[]): LeafRun[] {
  const sorted = subtrees
    .map((s) => ({ s, lo: s.index * 2 ** s.level, hi: (s.index + 1) * 2 ** s.level }))
    .sort((a, b) => a.lo - b.lo);
  const runs: LeafRun[] = [];
  for (const { s, lo, hi } of sorted) {
    const last = runs[runs.length - 1];
    if (last !== undefined && lo <= last.hi) {
      last.hi = Math.max(last.hi, hi);
      last.subtrees.push(s);
    } else {
      runs.push({ lo, hi, subtrees: [s] });
    }
  }
  return runs;
}
