import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never import src/ from a migration.
/**
 * PostgreSQL's fingerprint-repeat trigger (0006) looked up the newest earlier operation with the
 * fingerprint as `max(created_at) … WHERE account_id, fingerprint, id <>`. PL/pgSQL keeps a
 * generic plan made on a session's first inserts, and on a table never analyzed (a new database:
 * every bench, and a new deployment until autovacuum's first ANALYZE) every index led by
 * account_id is estimated to return one row, so they all cost the same and the plan kept one led
 * by (account_id, method): each insert read every operation of its account (11.7 million index
 * entries for 4,850 claims in one bench), so a claim's cost grew with its account.
 *
 * The function is now planned for each call (`plan_cache_mode`), so the plan follows the table's
 * size as it grows; and it asks in the fingerprint index's own order, newest first, LIMIT 1. While
 * the table is small (a few hundred operations) the planner can still pick another index; past
 * that it reads one entry. bench/claim-path.ts --postgres, 5,000 claims, interleaved: 1,300 vs
 * 870 claims/s, 330 vs 690 µs of PostgreSQL CPU per claim.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`CREATE OR REPLACE FUNCTION gatehouse_fingerprint_repeat() RETURNS trigger LANGUAGE plpgsql
    SET plan_cache_mode = force_custom_plan AS $$
    DECLARE previous text;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('gatehouse:fingerprint:' || NEW.account_id || ':' || NEW.fingerprint, 0));
      SELECT created_at INTO previous FROM operations
        WHERE account_id = NEW.account_id AND fingerprint = NEW.fingerprint AND id <> NEW.id
        ORDER BY account_id DESC, fingerprint DESC, created_at DESC, id DESC LIMIT 1;
      IF previous IS NOT NULL THEN
        INSERT INTO fingerprint_repeats (account_id, operation_id, fingerprint, created_at, gap_ms)
        VALUES (NEW.account_id, NEW.id, NEW.fingerprint, NEW.created_at,
          greatest(0, round(extract(epoch FROM (NEW.created_at::timestamptz - previous::timestamptz)) * 1000))::bigint);
      END IF;
      RETURN NULL;
    END $$`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
