import type { Selectable } from 'kysely';
import type { ApprovalsTable } from '../../schema/database.js';
import type { Db, Store } from '../store/store.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Clock } from '../core/time.js';
import { rfc3339 } from '../core/time.js';
import type { JsonValue } from '../core/json.js';
import type { SigningKey } from '../core/signing-key.js';
import type { Logger } from 'pino';
import type { ApprovalView, GatedOperation, OperationPort, OperationSummary } from './seam.js';

export type ApprovalRow = Selectable<ApprovalsTable>;

/** What the approvals domain needs from the composition root. */
export interface ApprovalDeps {
  store: Store;
  ledger: Ledger;
  clock: Clock;
  signingKey: SigningKey;
  logger: Logger;
  /** Handed over by the operations domain: the only way approvals change an operation. */
  operations: OperationPort;
}

/** The operation columns an approval view and its events show. */
export type OperationFacts = Pick<GatedOperation, 'id' | 'account_id' | 'idempotency_key' | 'fingerprint' | 'method' | 'route' | 'agent_run_id'>
  & { requested_by?: string; state?: string };

export interface RequestPayload {
  summary: OperationSummary | null;
  command: JsonValue;
}

export interface DecisionView {
  approver: string;
  decision: 'approve' | 'deny';
  reason: string | null;
  decided_at: string;
}

const OPERATION_FACTS = ['id', 'account_id', 'idempotency_key', 'fingerprint', 'method', 'route', 'agent_run_id', 'requested_by', 'state'] as const;

export async function loadOperation(db: Db, accountId: string, operationId: string): Promise<OperationFacts | undefined> {
  return db.selectFrom('operations').select(OPERATION_FACTS)
    .where('account_id', '=', accountId).where('id', '=', operationId).executeTakeFirst();
}

/**
 * Whether the principal asked for the approval's operation: this request's principal, or any
 * claim call recorded on the operation (its first claim, a retry, the claim that took the lease:
 * OperationPort.hasClaimed). Such a principal may not decide on it (self_approval).
 */
export async function askedFor(
  deps: ApprovalDeps, db: Db, approval: Pick<ApprovalRow, 'requested_by' | 'account_id' | 'operation_id'>, principalId: string,
): Promise<boolean> {
  return approval.requested_by === principalId
    || deps.operations.hasClaimed(db, { id: approval.operation_id, account_id: approval.account_id }, principalId);
}

/** A pending approval whose request time ran out is shown as expired even before anyone touched it. */
export function effectiveState(row: ApprovalRow, now: number): ApprovalView['state'] {
  if (row.state === 'pending' && now >= Number(row.expires_at)) return 'expired';
  return row.state as ApprovalView['state'];
}

/** Summary and command live only in the approval_requested event's (encrypted) payload. */
export async function readRequestPayload(db: Db, ledger: Ledger, row: ApprovalRow): Promise<RequestPayload> {
  const payload = await ledger.readPayload(db, row.account_id, Number(row.request_seq)) as { summary?: OperationSummary | null; command?: JsonValue } | null;
  return { summary: payload?.summary ?? null, command: payload?.command ?? null };
}

export async function readDecisions(db: Db, ledger: Ledger, row: ApprovalRow): Promise<DecisionView[]> {
  const decisions = await db.selectFrom('approval_decisions').selectAll()
    .where('approval_id', '=', row.id).orderBy('event_seq').execute();
  const views: DecisionView[] = [];
  for (const d of decisions) {
    const payload = await ledger.readPayload(db, row.account_id, Number(d.event_seq)) as { reason?: string | null } | null;
    views.push({ approver: d.approver_id, decision: d.decision as DecisionView['decision'], reason: payload?.reason ?? null, decided_at: d.decided_at });
  }
  return views;
}

/** The public JSON of an approval (docs/http-api.md#approvals). */
export function buildView(row: ApprovalRow, op: OperationFacts, request: RequestPayload, decisions: DecisionView[], now: number): ApprovalView {
  return {
    id: row.id,
    operation_id: row.operation_id,
    account_id: row.account_id,
    idempotency_key: op.idempotency_key,
    fingerprint: row.fingerprint,
    method: op.method,
    route: op.route,
    summary: request.summary,
    command: request.command,
    requested_by: row.requested_by,
    requested_at: row.requested_at,
    expires_at: rfc3339(Number(row.expires_at)),
    approvers_required: Number(row.approvers_required),
    decisions,
    state: effectiveState(row, now),
    grant: row.grant ? JSON.parse(row.grant) : null,
  };
}

/** Reads everything a view needs; `db` may be a transaction. */
export async function viewOf(db: Db, ledger: Ledger, row: ApprovalRow, now: number, op?: OperationFacts): Promise<ApprovalView> {
  const facts = op ?? await loadOperation(db, row.account_id, row.operation_id);
  if (!facts) throw new Error(`approval ${row.id} points at a missing operation`);
  return buildView(row, facts, await readRequestPayload(db, ledger, row), await readDecisions(db, ledger, row), now);
}
