import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never import src/ from a migration.
/**
 * Incident review (search and the duplicates report) on accounts with millions of operations.
 *
 * Search: one index per filter, each ending in (created_at, id), so the first page of any
 * single filter, newest or oldest first, is an index range read in order (no sort). The old
 * (account_id, state, id) index becomes (account_id, state, created_at, id). The key and the
 * business key already have their unique indexes.
 *
 * Duplicates: `fingerprint_repeats` holds one row for each operation created while the account
 * already had an operation with the same fingerprint (under another key: keys are unique per
 * account), with the gap to the newest such operation. Most fingerprints never repeat, so the
 * report reads a small table by (account_id, gap_ms) instead of grouping every operation.
 * A trigger fills it in the inserting statement, so no write path can forget it. On
 * PostgreSQL the trigger first takes a transaction-scoped advisory lock on (account,
 * fingerprint): of two concurrent inserts with one fingerprint the second waits for the first
 * to commit and then sees it, so a pair created at the same moment is not missed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema.dropIndex('operations_state').execute();
  const indexes: Array<[string, string]> = [
    ['operations_created', 'created_at'],
    ['operations_state_created', 'state'],
    ['operations_agent_run_created', 'agent_run_id'],
    ['operations_fingerprint_created', 'fingerprint'],
    ['operations_route_created', 'route'],
    ['operations_method_created', 'method'],
  ];
  for (const [name, column] of indexes) {
    const columns = column === 'created_at' ? ['account_id', 'created_at', 'id'] : ['account_id', column, 'created_at', 'id'];
    await db.schema.createIndex(name).on('operations').columns(columns).execute();
  }

  await db.schema.createTable('fingerprint_repeats')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('gap_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fingerprint_repeats_pk', ['account_id', 'operation_id'])
    .execute();
  await db.schema.createIndex('fingerprint_repeats_gap').on('fingerprint_repeats')
    .columns(['account_id', 'gap_ms', 'created_at', 'operation_id']).execute();
  // A report over a time window reads the repeats of that window in order instead.
  await db.schema.createIndex('fingerprint_repeats_created').on('fingerprint_repeats')
    .columns(['account_id', 'created_at', 'operation_id', 'gap_ms']).execute();

  // Operations written before this migration: each one's gap to the newest earlier operation with its fingerprint.
  await sql`INSERT INTO fingerprint_repeats (account_id, operation_id, fingerprint, created_at, gap_ms)
    SELECT account_id, id, fingerprint, created_at, ${gapMs(pg, sql.ref('created_at'), sql.ref('previous'))}
    FROM (SELECT account_id, id, fingerprint, created_at,
            lag(created_at) OVER (PARTITION BY account_id, fingerprint ORDER BY created_at, id) AS previous
          FROM operations) o
    WHERE previous IS NOT NULL`.execute(db);

  if (pg) {
    await sql`CREATE FUNCTION gatehouse_fingerprint_repeat() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE previous text;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended('gatehouse:fingerprint:' || NEW.account_id || ':' || NEW.fingerprint, 0));
        SELECT max(created_at) INTO previous FROM operations
          WHERE account_id = NEW.account_id AND fingerprint = NEW.fingerprint AND id <> NEW.id;
        IF previous IS NOT NULL THEN
          INSERT INTO fingerprint_repeats (account_id, operation_id, fingerprint, created_at, gap_ms)
          VALUES (NEW.account_id, NEW.id, NEW.fingerprint, NEW.created_at,
            greatest(0, round(extract(epoch FROM (NEW.created_at::timestamptz - previous::timestamptz)) * 1000))::bigint);
        END IF;
        RETURN NULL;
      END $$`.execute(db);
    await sql`CREATE TRIGGER operations_fingerprint_repeat AFTER INSERT ON operations
      FOR EACH ROW EXECUTE FUNCTION gatehouse_fingerprint_repeat()`.execute(db);
    return;
  }
  await sql`CREATE TRIGGER operations_fingerprint_repeat AFTER INSERT ON operations
    WHEN EXISTS (SELECT 1 FROM operations WHERE account_id = NEW.account_id AND fingerprint = NEW.fingerprint AND id <> NEW.id)
    BEGIN
      INSERT INTO fingerprint_repeats (account_id, operation_id, fingerprint, created_at, gap_ms)
      VALUES (NEW.account_id, NEW.id, NEW.fingerprint, NEW.created_at,
        max(0, CAST(round((julianday(NEW.created_at) - julianday((SELECT max(created_at) FROM operations
          WHERE account_id = NEW.account_id AND fingerprint = NEW.fingerprint AND id <> NEW.id))) * 86400000) AS INTEGER)));
    END`.execute(db);
}

function gapMs(pg: boolean, later: ReturnType<typeof sql.ref>, earlier: ReturnType<typeof sql.ref>) {
  return pg
    ? sql`greatest(0, round(extract(epoch FROM (${later}::timestamptz - ${earlier}::timestamptz)) * 1000))::bigint`
    : sql`max(0, CAST(round((julianday(${later}) - julianday(${earlier})) * 86400000) AS INTEGER))`;
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
