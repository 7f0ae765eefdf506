import type { Kysely } from 'kysely';

// Frozen in time: never import src/ from a migration.
/**
 * Digests of the lease holder's accepted reports, so an identical repeat (a
 * gateway retrying its own report) answers as the first did and records nothing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('operation_reports')
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('operation_reports_pk', ['operation_id', 'digest'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
