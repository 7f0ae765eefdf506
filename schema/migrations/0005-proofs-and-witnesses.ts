import crypto from 'node:crypto';
import type { Kysely } from 'kysely';

// Frozen in time: never import src/ from a migration (so the Merkle hashing below is its own).

/**
 * Proofs and witnesses.
 *
 * `merkle_nodes`: the hash of every perfect subtree of 256 leaves or more (level >= 8), filled
 * on append. An inclusion or consistency proof of a 1,000,000-event account then needs about
 * a dozen stored hashes and at most two runs of 256 event hashes, never the whole tree. Costs
 * about 2 rows per 256 events. Existing logs are filled here from their event hashes.
 *
 * `checkpoint_cosignatures`: witness cosignature lines (C2SP tlog-cosignature) on a signed
 * checkpoint, one per witness key. `checkpoints` is append-only, so lines live beside it and
 * are appended to the note when it is served.
 */
export const STORED_LEVEL = 8;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('merkle_nodes')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('idx', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('merkle_nodes_pk', ['account_id', 'level', 'idx'])
    .execute();

  await db.schema.createTable('checkpoint_cosignatures')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('tree_size', 'bigint', (c) => c.notNull())
    .addColumn('witness', 'text', (c) => c.notNull())
    .addColumn('line', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('checkpoint_cosignatures_pk', ['account_id', 'tree_size', 'witness'])
    .execute();
  await db.schema.createIndex('checkpoint_cosignatures_witness').on('checkpoint_cosignatures')
    .columns(['witness', 'account_id', 'tree_size']).execute();

  await fillMerkleNodes(db);
}

const PAGE = 10_000;

async function fillMerkleNodes(db: Kysely<any>): Promise<void> {
  const accounts = await db.selectFrom('chains').select('account_id').orderBy('account_id').execute();
  for (const { account_id: accountId } of accounts) {
    const stack: Buffer[] = [];
    let size = 0;
    for (let after = 0; ;) {
      const rows = await db.selectFrom('events').select(['seq', 'hash'])
        .where('account_id', '=', accountId).where('seq', '>', after).orderBy('seq').limit(PAGE).execute();
      const nodes: Array<{ account_id: string; level: number; idx: number; hash: string }> = [];
      for (const row of rows) {
        let h = crypto.createHash('sha256').update(Buffer.from([0])).update(Buffer.from(String(row.hash), 'hex')).digest();
        let s = size;
        let level = 0;
        size++;
        while (s % 2 === 1) {
          h = crypto.createHash('sha256').update(Buffer.from([1])).update(stack.pop()!).update(h).digest();
          s = (s - 1) / 2;
          level++;
          if (level >= STORED_LEVEL) nodes.push({ account_id: accountId, level, idx: size / 2 ** level - 1, hash: h.toString('hex') });
        }
        stack.push(h);
      }
      for (let i = 0; i < nodes.length; i += 500) await db.insertInto('merkle_nodes').values(nodes.slice(i, i + 500)).execute();
      if (rows.length < PAGE) break;
      after = Number(rows[rows.length - 1]!.seq);
    }
  }
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
