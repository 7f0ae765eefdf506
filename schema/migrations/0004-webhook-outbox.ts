import type { Kysely } from 'kysely';

// Frozen in time: never import src/ from a migration.
/**
 * The approval webhook's outbox: one row per approval request, written in the request's own
 * transaction, deleted once a delivery succeeded. A row survives a crash, so delivery is at
 * least once across restarts; `claimed_until` keeps several instances from posting the same
 * row at once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('webhook_outbox')
    .addColumn('approval_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_until', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_outbox_due').on('webhook_outbox').columns(['failed_at', 'next_attempt_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
