import { sql, type Updateable } from 'kysely';
import type { OperationsTable } from '../../schema/database.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Db, Store } from '../store/store.js';
import { rfc3339 } from '../core/time.js';
import { changeEvent } from './operation-events.js';
import type { OperationRow } from './operation-json.js';
import { LEASED_STATES } from './states.js';

/** Locks one operation of one account for a state decision (a row lock on PostgreSQL; SQLite's writer lock serialises). */
export function lockOperation(store: Store, trx: Db, accountId: string, id: string): Promise<OperationRow | undefined> {
  return store.forUpdate(trx.selectFrom('operations').selectAll().where('account_id', '=', accountId).where('id', '=', id))
    .executeTakeFirst();
}

export function lockOperationByKey(store: Store, trx: Db, accountId: string, key: string): Promise<OperationRow | undefined> {
  return store.forUpdate(trx.selectFrom('operations').selectAll().where('account_id', '=', accountId).where('idempotency_key', '=', key))
    .executeTakeFirst();
}

/** Writes a change to a locked row and returns the row as it now is. */
export async function updateOperation(
  trx: Db, row: OperationRow, change: Updateable<OperationsTable>, nowMs: number,
): Promise<OperationRow> {
  const updated_at = rfc3339(nowMs);
  await trx.updateTable('operations').set({ ...change, updated_at, version: sql`version + 1` })
    .where('account_id', '=', row.account_id).where('id', '=', row.id).execute();
  return { ...row, ...change, updated_at, version: row.version + 1 } as OperationRow;
}

/**
 * A lease that ran out before a terminal report turns the operation `unknown`
 * (the write may or may not have happened). Conditional on the state and the
 * expiry, so of several instances sweeping at once only one wins and only one
 * `lease_expired` event is written. Returns the row as it is afterwards.
 */
export async function expireIfDue(trx: Db, ledger: Ledger, row: OperationRow, nowMs: number): Promise<OperationRow> {
  if (!(LEASED_STATES as readonly string[]).includes(row.state) || row.lease_expires_at === null || row.lease_expires_at > nowMs) {
    return row;
  }
  const updated_at = rfc3339(nowMs);
  const result = await trx.updateTable('operations')
    .set({ state: 'unknown', updated_at, version: sql`version + 1` })
    .where('account_id', '=', row.account_id).where('id', '=', row.id)
    .where('state', 'in', LEASED_STATES).where('lease_expires_at', '<=', nowMs)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return row;
  const expired = { ...row, state: 'unknown', updated_at, version: row.version + 1 };
  await ledger.append(trx, changeEvent(expired, 'lease_expired', null));
  return expired;
}

/** A terminal operation no longer holds its exclusive scope. */
export async function releaseScope(trx: Db, row: OperationRow): Promise<void> {
  if (row.exclusive_scope === null) return;
  await trx.deleteFrom('scope_holds')
    .where('account_id', '=', row.account_id).where('scope', '=', row.exclusive_scope).where('operation_id', '=', row.id)
    .execute();
}
