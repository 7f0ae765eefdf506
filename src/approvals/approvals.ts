import type { Db, UnitOfWork } from '../store/store.js';
import type { JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';
import { canActInAccount, requireRole, type Principal } from '../principals/roles.js';
import type { ApprovalPolicy } from '../policies/policies.js';
import type { ApprovalGate, ApprovalStanding, ApprovalView, GatedOperation, OperationSummary } from './seam.js';
import { Gate } from './gate.js';
import { decide, type DecisionInput } from './decisions.js';
import { askedFor, viewOf, type ApprovalDeps, type ApprovalRow } from './records.js';
import type { WebhookTarget } from './webhook.js';
import { WebhookOutbox } from './webhook-outbox.js';
import { expireDueRequests, startExpirySweeper } from './request-expiry.js';
import type { PeriodicTask } from '../core/periodic-task.js';
import type { WorkScope } from '../store/work-scope.js';
import { UiSessions } from '../principals/sessions.js';
import { listApprovals, type ApprovalListQuery, type ApprovalPage } from './approval-list.js';

export interface ApprovalsOptions {
  webhook: () => WebhookTarget | null;
  webhookBackoffMs?: number[];
}

/** The approvals domain: the gate the claim calls, decisions, reads, the webhook and the UI sessions. */
export class Approvals implements ApprovalGate {
  /** Where `/ui/` is reachable from outside; the server sets it once it listens, for webhook links. */
  publicBaseUrl: string | null = null;
  /** The approval webhook's durable outbox and its delivery loop (started by `serve`). */
  readonly webhook: WebhookOutbox;
  readonly sessions: UiSessions;
  private readonly gate: Gate;

  constructor(private readonly deps: ApprovalDeps, options: ApprovalsOptions) {
    this.webhook = new WebhookOutbox(deps, { target: options.webhook, publicBaseUrl: () => this.publicBaseUrl, backoffMs: options.webhookBackoffMs });
    this.gate = new Gate(deps, (trx, work, approval) => this.webhook.enqueue(trx, work, approval));
    this.sessions = new UiSessions(deps.store, deps.clock);
  }

  request(trx: Db, work: UnitOfWork, input: { operation: GatedOperation; requestedBy: Principal; policy: ApprovalPolicy; summary: OperationSummary | null; command: JsonValue }) {
    return this.gate.request(trx, work, input);
  }

  standing(trx: Db, work: UnitOfWork, operation: GatedOperation, policy: ApprovalPolicy, askedBy: { id: string }): Promise<ApprovalStanding> {
    return this.gate.standing(trx, work, operation, policy, askedBy);
  }

  refuseExpiredGrant(trx: Db, work: UnitOfWork, operation: GatedOperation): Promise<DomainError | null> {
    return this.gate.refuseExpiredGrant(trx, work, operation);
  }

  expireIfRunOut(trx: Db, operation: GatedOperation): Promise<boolean> {
    return this.gate.expireIfRunOut(trx, operation);
  }

  /**
   * Whether the principal asked for the approval's operation (its first claim, this request, or
   * any later claim call answered with it): `decide` refuses such a principal (self_approval),
   * so the approver page offers it no form.
   */
  askedFor(principal: Principal, approval: ApprovalView): Promise<boolean> {
    const { requested_by, account_id, operation_id } = approval as ApprovalView & Pick<ApprovalRow, 'requested_by' | 'account_id' | 'operation_id'>;
    return askedFor(this.deps, this.deps.store.db, { requested_by, account_id, operation_id }, principal.id);
  }

  /** Expires pending requests whose time ran out, about every second (request-expiry.ts); started by `serve`. */
  startExpirySweeper(onError: (error: unknown) => void): PeriodicTask {
    return startExpirySweeper(this.deps, this.gate, onError);
  }

  /** One expiry pass now (request-expiry.ts): what the sweeper does each second. */
  expireDueRequests(): Promise<number> {
    return expireDueRequests(this.deps, this.gate);
  }

  /** Resolves when this instance's webhook deliveries are made or given up. */
  async idle(): Promise<void> {
    await this.webhook.idle();
  }

  decide(principal: Principal, approvalId: string, input: DecisionInput, workScope?: WorkScope): Promise<ApprovalView> {
    return decide(this.deps, this.gate, principal, approvalId, input, workScope);
  }

  /** One approval, for an approver of its account or an admin; any other account's is not found. */
  async get(principal: Principal, approvalId: string): Promise<ApprovalView> {
    requireRole(principal, 'approver', 'admin');
    const row = await this.deps.store.db.selectFrom('approvals').selectAll().where('id', '=', approvalId).executeTakeFirst();
    if (!row || !canActInAccount(principal, row.account_id)) throw new DomainError('not_found', `no approval ${approvalId}`);
    return viewOf(this.deps.store.db, this.deps.ledger, row, this.deps.clock.now());
  }

  /** Oldest first, so the request closest to expiring is on top (approval-list.ts). */
  list(principal: Principal, query: ApprovalListQuery): Promise<ApprovalPage> {
    return listApprovals(this.deps, principal, query);
  }
}
