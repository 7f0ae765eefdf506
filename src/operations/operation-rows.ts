import { affectedRows, compiledOnce, firstRow } from '../store/compiled-statement.js';
import type { Db, Store } from '../store/store.js';
import type { OperationRow } from './operation-json.js';
import type { RowInsert } from '../ledger/chain-write.js';

/**
 * Locks and the writes to `operations` that are not a change of state: the claim's insert
 * and pointing at the current approval. State changes are transitions.ts's alone.
 */

/** Locks one operation of one account for a state decision (a row lock on PostgreSQL; SQLite's writer lock serialises). */
export async function lockOperation(store: Store, trx: Db, accountId: string, id: string): Promise<OperationRow | undefined> {
  return firstRow(await selectLocked(trx, { store, accountId, column: 'id', value: id }));
}

export async function lockOperationByKey(store: Store, trx: Db, accountId: string, key: string): Promise<OperationRow | undefined> {
  return firstRow(await selectLocked(trx, { store, accountId, column: 'idempotency_key', value: key }));
}

/** Every report, replay and retry locks its row first: compiled once per column (compiled-statement.ts). */
const selectLocked = compiledOnce(
  (db, { store, accountId, column, value }: { store: Store; accountId: string; column: 'id' | 'idempotency_key'; value: string }) =>
    store.forUpdate(db.selectFrom('operations').selectAll().where('account_id', '=', accountId).where(column, '=', value)),
  ({ accountId, value }) => [accountId, value],
  ({ column }) => column,
);

/**
 * A new operation, inserted unless a unique constraint (key or business key) is taken, for the
 * ledger to write with the claim's `attempted` event (Ledger.appendAfterInsert; on PostgreSQL in
 * the same statement). `insert` alone answers false when it was taken (a concurrent claim won).
 * No RETURNING on its own: the row is the one just built, and SQLite's RETURNING tripled the
 * insert's cost.
 */
export function operationInsert(row: OperationRow): RowInsert {
  return {
    query: (db) => insertQuery(db, row),
    parameters: () => insertValues(row),
    shape: () => insertShape(row),
    insert: async (trx) => affectedRows(await insertRow(trx, row)) === 1,
  };
}

const insertQuery = (db: Db, row: OperationRow) => db.insertInto('operations').values(row).onConflict((oc) => oc.doNothing());
const insertValues = (row: OperationRow) => Object.values(row);
const insertShape = (row: OperationRow) => Object.keys(row).join();

/** Every new-key claim on SQLite, and on PostgreSQL one with no guessed head to ride on: compiled once (compiled-statement.ts). */
const insertRow = compiledOnce(insertQuery, insertValues, insertShape);

/** The operation points at its current approval (set when the approvals domain makes a request). */
export async function pointAtApproval(trx: Db, accountId: string, id: string, approvalId: string): Promise<void> {
  await trx.updateTable('operations').set({ approval_id: approvalId })
    .where('account_id', '=', accountId).where('id', '=', id).execute();
}
