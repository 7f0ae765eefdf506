import type { Kysely } from 'kysely';

// Frozen in time: never import src/ from a migration.
/**
 * `command_seq` was written by every claim (one more statement inside the
 * account's chain lock) and read by nothing: the command is the payload of the
 * operation's `attempted` event, which the timeline already finds by operation id.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operations').dropColumn('command_seq').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
