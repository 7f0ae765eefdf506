import { affectedRows, compiledOnce } from '../store/compiled-statement.js';
import type { Db, Store } from '../store/store.js';
import type { OperationRow } from './operation-json.js';

/**
 * Locks and the writes to `operations` that are not a change of state: the claim's insert
 * and pointing at the current approval. State changes are transitions.ts's alone.
 */

/** Locks one operation of one account for a state decision (a row lock on PostgreSQL; SQLite's writer lock serialises). */
export function lockOperation(store: Store, trx: Db, accountId: string, id: string): Promise<OperationRow | undefined> {
  return store.forUpdate(trx.selectFrom('operations').selectAll().where('account_id', '=', accountId).where('id', '=', id))
    .executeTakeFirst();
}

export function lockOperationByKey(store: Store, trx: Db, accountId: string, key: string): Promise<OperationRow | undefined> {
  return store.forUpdate(trx.selectFrom('operations').selectAll().where('account_id', '=', accountId).where('idempotency_key', '=', key))
    .executeTakeFirst();
}

/**
 * Inserts a new operation unless a unique constraint (key or business key) is taken; false when
 * it was (a concurrent claim won). No RETURNING: the row is the one just built, and SQLite's
 * RETURNING tripled the insert's cost.
 */
export async function insertOperation(trx: Db, row: OperationRow): Promise<boolean> {
  return affectedRows(await insertRow(trx, row)) === 1;
}

/** Every new-key claim runs it: compiled once (compiled-statement.ts). */
const insertRow = compiledOnce(
  (db, row: OperationRow) => db.insertInto('operations').values(row).onConflict((oc) => oc.doNothing()),
  (row) => Object.values(row),
  (row) => Object.keys(row).join(),
);

/** The operation points at its current approval (set when the approvals domain makes a request). */
export async function pointAtApproval(trx: Db, accountId: string, id: string, approvalId: string): Promise<void> {
  await trx.updateTable('operations').set({ approval_id: approvalId })
    .where('account_id', '=', accountId).where('id', '=', id).execute();
}
