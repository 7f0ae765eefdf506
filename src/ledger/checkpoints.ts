import { checkpointOrigin } from '../core/log-keys.js';
import { checkpointBody, signNote } from '../core/note.js';
import type { SigningKey } from '../core/signing-key.js';
import type { Checkpoint } from '../core/wire.js';

export type { Checkpoint };

export function signCheckpoint(
  key: SigningKey, ledgerId: string, accountId: string, treeSize: number, root: Uint8Array, createdAt: string,
): Checkpoint {
  const note = signNote(checkpointBody(checkpointOrigin(ledgerId, accountId), treeSize, root), key);
  return { account_id: accountId, tree_size: treeSize, root_hash: Buffer.from(root).toString('hex'), created_at: createdAt, note };
}
