import type { Kysely } from 'kysely';

// Frozen in time: never import src/ from a migration.
/**
 * The sweeper asks every second for operations still leased whose lease ran out
 * (`state IN ('running', 'sent', 'accepted') AND lease_expires_at <= now`). A finished operation
 * keeps its lease's expiry (the row records the lease it had), so on the index over
 * `lease_expires_at` alone that range held every operation whose lease time had passed, finished
 * or not, and each sweep read them all to find the few still leased: 33 ms of a blocked event loop
 * every second on 300,000 finished operations, growing with the account. Led by the state, the
 * index reads only the leased states' ranges.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('operations_lease').execute();
  await db.schema.createIndex('operations_lease_due').on('operations').columns(['state', 'lease_expires_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
