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
import { paramError } from '../operations/query-params.js';

export interface ApprovalsOptions {
  webhook: () => WebhookTarget | null;
  webhookBackoffMs?: number[];
}

export interface ApprovalPage {
  items: ApprovalView[];
  next_cursor: string | null;
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

  /** Oldest first, so the request closest to expiring is on top. The cursor is opaque to callers. */
  async list(principal: Principal, query: { state?: ApprovalView['state']; accountId?: string; limit: number; cursor?: string }): Promise<ApprovalPage> {
    requireRole(principal, 'approver', 'admin');
    const now = this.deps.clock.now();
    const accountId = principal.roles.includes('admin') ? query.accountId : principal.account_id;
    let q = this.deps.store.db.selectFrom('approvals').selectAll();
    if (accountId !== undefined) q = q.where('account_id', '=', accountId);
    if (query.state === 'pending') q = q.where('state', '=', 'pending').where('expires_at', '>', now);
    else if (query.state === 'expired') q = q.where((eb) => eb.or([eb('state', '=', 'expired'), eb.and([eb('state', '=', 'pending'), eb('expires_at', '<=', now)])]));
    else if (query.state) q = q.where('state', '=', query.state);
    const after = decodeCursor(query.cursor);
    if (after) q = q.where((eb) => eb.or([eb('requested_at', '>', after.at), eb.and([eb('requested_at', '=', after.at), eb('id', '>', after.id)])]));
    const rows = await q.orderBy('requested_at').orderBy('id').limit(query.limit + 1).execute();
    const page = rows.slice(0, query.limit);
    const items: ApprovalView[] = [];
    for (const row of page) items.push(await viewOf(this.deps.store.db, this.deps.ledger, row, now));
    const last = page[page.length - 1];
    return { items, next_cursor: rows.length > query.limit && last ? encodeCursor(last.requested_at, last.id) : null };
  }
}

function encodeCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

/** Untrusted input: a cursor that does not decode is a 400, not a 500. */
function decodeCursor(cursor: string | undefined): { at: string; id: string } | null {
  if (!cursor) return null;
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'string' && typeof id === 'string') return { at, id };
  } catch {
    // fall through
  }
  throw paramError('cursor', 'is not a cursor this server gave out');
}
