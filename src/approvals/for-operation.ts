import type { Db } from '../store/store.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ApprovalView } from './seam.js';
import { viewOf } from './records.js';

/**
 * Every approval of one operation with its decisions, oldest first: what the review console
 * shows on an operation's page. The caller has already established that it may read the
 * operation's account (an auditor or admin): this only reads.
 */
export async function approvalsOfOperation(db: Db, ledger: Ledger, nowMs: number, accountId: string, operationId: string): Promise<ApprovalView[]> {
  const rows = await db.selectFrom('approvals').selectAll()
    .where('account_id', '=', accountId).where('operation_id', '=', operationId)
    .orderBy('requested_at').orderBy('id').execute();
  const views: ApprovalView[] = [];
  for (const row of rows) views.push(await viewOf(db, ledger, row, nowMs));
  return views;
}
