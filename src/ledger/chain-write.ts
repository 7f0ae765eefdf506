import { sql } from 'kysely';
import type { EventsTable } from '../../schema/database.js';
import type { Db, Dialect } from '../store/store.js';

/** An account's chain head as stored in `chains`. */
export interface ChainHead {
  size: number;
  head_hash: string;
  /** The Merkle frontier as JSON (perfect subtree roots, largest first). */
  frontier: string;
  checkpoint_size: number;
}

/**
 * Writes the next event and moves the chain head from `from` to `to`, only if
 * the stored head is still exactly `from` (a compare-and-set on size, hash and
 * checkpoint size; the same hash at the same size means the same chain, so the
 * frontier `to` was computed from matches too). False, with nothing written,
 * when it is not.
 */
export async function advanceChain(dialect: Dialect, trx: Db, accountId: string, from: ChainHead, to: ChainHead, event: EventsTable): Promise<boolean> {
  return dialect === 'postgres' ? advancePostgres(trx, accountId, from, to, event) : advanceSqlite(trx, accountId, from, to, event);
}

/** SQLite: two in-process statements under the writer lock; the event is inserted only once the head moved. */
async function advanceSqlite(trx: Db, accountId: string, from: ChainHead, to: ChainHead, event: EventsTable): Promise<boolean> {
  const moved = await trx.updateTable('chains').set(to)
    .where('account_id', '=', accountId).where('size', '=', from.size)
    .where('head_hash', '=', from.head_hash).where('checkpoint_size', '=', from.checkpoint_size)
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) !== 1) return false;
  await trx.insertInto('events').values(event).execute();
  return true;
}

/**
 * PostgreSQL: one statement, one round trip. Round trips made while holding an
 * account's chain-head row lock bound that account's event rate across every
 * instance, so the head moves and the event is inserted together: the insert
 * selects from the update's RETURNING, and so writes nothing when the head had moved.
 */
async function advancePostgres(trx: Db, accountId: string, from: ChainHead, to: ChainHead, event: EventsTable): Promise<boolean> {
  const result = await sql`
    WITH advanced AS (
      UPDATE chains SET size = ${to.size}, head_hash = ${to.head_hash}, frontier = ${to.frontier}, checkpoint_size = ${to.checkpoint_size}
      WHERE account_id = ${accountId} AND size = ${from.size} AND head_hash = ${from.head_hash} AND checkpoint_size = ${from.checkpoint_size}
      RETURNING 1
    )
    INSERT INTO events (account_id, seq, ts, type, operation_id, idempotency_key, fingerprint, actor, agent_run_id, method,
      route, state, provider_ref, response_status, payload_hash, prev_hash, hash, payload)
    SELECT ${event.account_id}, ${event.seq}::bigint, ${event.ts}, ${event.type}, ${event.operation_id}::text, ${event.idempotency_key}::text,
      ${event.fingerprint}::text, ${event.actor}::text, ${event.agent_run_id}::text, ${event.method}::text, ${event.route}::text,
      ${event.state}::text, ${event.provider_ref}::text, ${event.response_status}::integer, ${event.payload_hash}::text,
      ${event.prev_hash}, ${event.hash}, ${event.payload}::bytea
    FROM advanced`.execute(trx);
  return Number(result.numAffectedRows) === 1;
}
