import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never import src/ from a migration.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  const blob = pg ? 'bytea' : 'blob';

  await db.schema.createTable('meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema.createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('wrapped_data_key', sql.raw(blob))
    .addColumn('shredded_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema.createTable('principals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();

  await db.schema.createTable('chains')
    .addColumn('account_id', 'text', (c) => c.primaryKey())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('head_hash', 'text', (c) => c.notNull())
    .addColumn('frontier', 'text', (c) => c.notNull())
    .addColumn('checkpoint_size', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.createTable('events')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('ts', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('fingerprint', 'text')
    .addColumn('actor', 'text')
    .addColumn('agent_run_id', 'text')
    .addColumn('method', 'text')
    .addColumn('route', 'text')
    .addColumn('state', 'text')
    .addColumn('provider_ref', 'text')
    .addColumn('response_status', 'integer')
    .addColumn('payload_hash', 'text')
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('payload', sql.raw(blob))
    .addPrimaryKeyConstraint('events_pk', ['account_id', 'seq'])
    .execute();
  await db.schema.createIndex('events_operation').on('events').columns(['account_id', 'operation_id', 'seq']).execute();

  await db.schema.createTable('checkpoints')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('tree_size', 'bigint', (c) => c.notNull())
    .addColumn('root_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('checkpoints_pk', ['account_id', 'tree_size'])
    .execute();

  await db.schema.createTable('operations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('business_key', 'text')
    .addColumn('exclusive_scope', 'text')
    .addColumn('agent_run_id', 'text')
    .addColumn('provider_ref', 'text')
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('lease_seconds', 'integer', (c) => c.notNull())
    .addColumn('lease_token_hash', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('command_seq', 'bigint', (c) => c.notNull())
    .addColumn('response_seq', 'bigint')
    .addColumn('response_status', 'integer')
    .addColumn('approval_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addUniqueConstraint('operations_account_key', ['account_id', 'idempotency_key'])
    .addUniqueConstraint('operations_account_business_key', ['account_id', 'business_key'])
    .execute();
  await db.schema.createIndex('operations_state').on('operations').columns(['account_id', 'state', 'id']).execute();
  await db.schema.createIndex('operations_lease').on('operations').columns(['lease_expires_at']).execute();

  await db.schema.createTable('scope_holds')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('scope_holds_pk', ['account_id', 'scope'])
    .execute();

  await db.schema.createTable('approvals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('approvers_required', 'integer', (c) => c.notNull())
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('requested_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('grant_ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('request_seq', 'bigint', (c) => c.notNull())
    .addColumn('grant', 'text')
    .addColumn('grant_expires_at', 'bigint')
    .addColumn('decided_at', 'text')
    .execute();
  await db.schema.createIndex('approvals_state').on('approvals').columns(['account_id', 'state', 'id']).execute();

  await db.schema.createTable('approval_decisions')
    .addColumn('approval_id', 'text', (c) => c.notNull())
    .addColumn('approver_id', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('decided_at', 'text', (c) => c.notNull())
    .addColumn('event_seq', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('approval_decisions_pk', ['approval_id', 'approver_id'])
    .execute();

  await db.schema.createTable('ui_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('principal_id', 'text', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();

  await refuseEventRewrites(db, pg);
}

/** The second wall behind the code: the database itself refuses to rewrite history. */
async function refuseEventRewrites(db: Kysely<any>, pg: boolean): Promise<void> {
  if (pg) {
    await sql`CREATE FUNCTION gatehouse_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'gatehouse: % is append-only', TG_TABLE_NAME; END $$`.execute(db);
    for (const table of ['events', 'checkpoints']) {
      await sql`CREATE TRIGGER ${sql.raw(`${table}_append_only`)} BEFORE UPDATE OR DELETE ON ${sql.table(table)}
        FOR EACH ROW EXECUTE FUNCTION gatehouse_append_only()`.execute(db);
      await sql`CREATE TRIGGER ${sql.raw(`${table}_no_truncate`)} BEFORE TRUNCATE ON ${sql.table(table)}
        FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_append_only()`.execute(db);
    }
    return;
  }
  for (const table of ['events', 'checkpoints']) {
    for (const action of ['UPDATE', 'DELETE']) {
      await sql.raw(`CREATE TRIGGER ${table}_no_${action.toLowerCase()} BEFORE ${action} ON ${table}
        BEGIN SELECT RAISE(ABORT, 'gatehouse: ${table} is append-only'); END`).execute(db);
    }
  }
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
