/**
 * Witness cosignatures on signed checkpoints. The log's note is stored once and never changes
 * (checkpoints are append-only); each witness's cosignature line is stored beside it and
 * appended when the checkpoint is served, so the API's note is the C2SP signed note with every
 * cosignature, and the checkpoint JSON says how many it carries.
 */
import type { Checkpoint } from '../core/wire.js';
import type { Db } from '../store/store.js';

/** A checkpoint as the API returns it once witnesses may have cosigned it. */
export interface CosignedCheckpoint extends Checkpoint {
  cosignatures: number;
}

/** The checkpoints of one account with their cosignature lines appended to the note. */
export async function withCosignatures(db: Db, checkpoints: readonly Checkpoint[]): Promise<CosignedCheckpoint[]> {
  if (checkpoints.length === 0) return [];
  const accountId = checkpoints[0]!.account_id;
  const sizes = checkpoints.map((c) => Number(c.tree_size));
  const rows = await db.selectFrom('checkpoint_cosignatures').select(['tree_size', 'witness', 'line'])
    .where('account_id', '=', accountId).where('tree_size', 'in', sizes).orderBy('tree_size').orderBy('witness').execute();
  const lines = new Map<number, string[]>();
  for (const row of rows) {
    const list = lines.get(Number(row.tree_size)) ?? [];
    list.push(row.line);
    lines.set(Number(row.tree_size), list);
  }
  return checkpoints.map((c) => {
    const extra = lines.get(Number(c.tree_size)) ?? [];
    return {
      account_id: c.account_id, tree_size: Number(c.tree_size), root_hash: c.root_hash, created_at: c.created_at,
      note: c.note + extra.map((line) => `${line}\n`).join(''), cosignatures: extra.length,
    };
  });
}

export async function withCosignaturesOne(db: Db, checkpoint: Checkpoint): Promise<CosignedCheckpoint> {
  return (await withCosignatures(db, [checkpoint]))[0]!;
}

export async function storeCosignature(
  trx: Db, row: { account_id: string; tree_size: number; witness: string; line: string; created_at: string },
): Promise<void> {
  await trx.insertInto('checkpoint_cosignatures').values(row)
    .onConflict((oc) => oc.columns(['account_id', 'tree_size', 'witness']).doNothing()).execute();
}

/** The largest checkpoint size of the account this witness cosigned (0: none). */
export async function lastCosignedSize(db: Db, witness: string, accountId: string): Promise<number> {
  const row = await db.selectFrom('checkpoint_cosignatures').select((eb) => eb.fn.max('tree_size').as('size'))
    .where('witness', '=', witness).where('account_id', '=', accountId).executeTakeFirst();
  return row?.size == null ? 0 : Number(row.size);
}
