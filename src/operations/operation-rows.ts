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
    shape: () => '',
    insert: async (trx) => affectedRows(await insertRow(trx, row)) === 1,
  };
}

/**
 * Every column, in one fixed order, so one statement text binds every row: no shape to build and
 * look up per claim (`Object.keys(row).join()` and hashing it were ~1 % of a claim's instructions,
 * bench/claim-instructions.ts). A column the row leaves undefined is bound as NULL on both sides,
 * so the text always names every column; that insertValues lists them in this order is checked by
 * compiledOnce on the statement's first use.
 */
const OPERATION_COLUMNS = [
  'id', 'account_id', 'idempotency_key', 'fingerprint', 'method', 'route', 'state', 'business_key', 'exclusive_scope',
  'agent_run_id', 'provider_ref', 'requested_by', 'lease_seconds', 'lease_token_hash', 'lease_expires_at', 'response_seq',
  'response_status', 'approval_id', 'created_at', 'updated_at', 'version',
] as const satisfies readonly (keyof OperationRow)[];
/** tsc fails here if a column is added to the operations table and not to OPERATION_COLUMNS. */
const everyColumnListed: [Exclude<keyof OperationRow, (typeof OPERATION_COLUMNS)[number]>] extends [never] ? true : false = true;
void everyColumnListed;

/** The row's values in OPERATION_COLUMNS order, written out (a loop's `row[column]` went megamorphic); compiledOnce checks the order on first use. */
const insertValues = (r: OperationRow): unknown[] => [
  r.id ?? null, r.account_id ?? null, r.idempotency_key ?? null, r.fingerprint ?? null, r.method ?? null,
  r.route ?? null, r.state ?? null, r.business_key ?? null, r.exclusive_scope ?? null,
  r.agent_run_id ?? null, r.provider_ref ?? null, r.requested_by ?? null, r.lease_seconds ?? null,
  r.lease_token_hash ?? null, r.lease_expires_at ?? null, r.response_seq ?? null, r.response_status ?? null,
  r.approval_id ?? null, r.created_at ?? null, r.updated_at ?? null, r.version ?? null,
];
const insertQuery = (db: Db, row: OperationRow) => db.insertInto('operations')
  .values(Object.fromEntries(OPERATION_COLUMNS.map((column) => [column, row[column] ?? null])) as OperationRow)
  .onConflict((oc) => oc.doNothing());

/** Every new-key claim on SQLite, and on PostgreSQL one with no guessed head to ride on: compiled once (compiled-statement.ts). */
const insertRow = compiledOnce(insertQuery, insertValues);

/** The operation points at its current approval (set when the approvals domain makes a request). */
export async function pointAtApproval(trx: Db, accountId: string, id: string, approvalId: string): Promise<void> {
  await trx.updateTable('operations').set({ approval_id: approvalId })
    .where('account_id', '=', accountId).where('id', '=', id).execute();
}
