/**
 * §7: "No checkpoint is ever signed that is inconsistent with an earlier one." The root a
 * checkpoint signs comes from the chain's Merkle frontier, a summary kept beside the events
 * (`chains.frontier`, and in memory). Nothing else checks that summary: damaged in the database,
 * it was loaded after a restart and signed, and every later checkpoint with it. So before
 * signing, the new root is checked against what the log itself holds — the stored subtree hashes
 * and event hashes that proofs are made of — through a consistency proof from the newest signed
 * checkpoint (or, for the first, the root of the whole log). A root that fails is not signed:
 * the chain's state is damaged, and the append or checkpoint fails (500, logged) until it is
 * repaired, rather than signing a history that contradicts the signed one.
 *
 * Once per checkpoint (every 1000 events or 10 s per account): a few stored nodes read, at most
 * 255 event hashes for the part of the log under a stored subtree.
 */
import { consistencyRanges, verifyConsistency } from '../core/merkle-proof.js';
import { InvariantError } from '../core/errors.js';
import type { Db } from '../store/store.js';
import { storedRangeHashes } from './proofs.js';

export async function refuseRootAgainstSignedHistory(trx: Db, accountId: string, size: number, root: Uint8Array): Promise<void> {
  const previous = await trx.selectFrom('checkpoints').select(['tree_size', 'root_hash'])
    .where('account_id', '=', accountId).where('tree_size', '<', size).orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
  if (previous === undefined) {
    const [whole] = await storedRangeHashes(trx, accountId, [[0, size]]);
    if (whole!.equals(root)) return;
    throw new InvariantError(`account ${accountId}: the chain's Merkle frontier at size ${size} does not give the root of its stored events; not signing a checkpoint (the chains row is damaged)`);
  }
  const from = Number(previous.tree_size);
  const proof = await storedRangeHashes(trx, accountId, consistencyRanges(from, size));
  if (verifyConsistency(from, size, proof, Buffer.from(previous.root_hash, 'hex'), root)) return;
  throw new InvariantError(
    `account ${accountId}: the root at size ${size} is not consistent with the checkpoint signed at size ${from}; not signing a checkpoint ` +
      '(the chain\'s Merkle frontier, its stored subtrees or its events are damaged: run gatehouse verify)',
  );
}
