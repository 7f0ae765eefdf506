import type { Kysely } from 'kysely';

// Frozen in time: never import src/ from a migration.
/**
 * The approval request expiry (src/approvals/request-expiry.ts) asks every second, on every
 * instance, for pending requests whose time ran out (`state = 'pending' AND expires_at <= now`)
 * across accounts. The only index on approvals is led by the account, so that was a scan of
 * every approval ever made. Led by the state, this one reads only the pending range.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('approvals_pending_expiry').on('approvals').columns(['state', 'expires_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
