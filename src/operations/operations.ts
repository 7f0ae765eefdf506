import { hasRole, requireRole, type Principal } from '../principals/roles.js';
import type { Policies } from '../policies/policies.js';
import { accountForOperation, accountForReview } from './access.js';
import { claimOperation } from './claim.js';
import { toClaimRequest, type ClaimBody } from './claim-request.js';
import type { ClaimAnswer, OperationDeps } from './claim-types.js';
import type { OperationJson } from './operation-json.js';
import { readOperation, readTimeline, type TimelineEvent } from './reads.js';
import { searchOperations, type OperationPage } from './search.js';
import type { SearchQuery } from './search-params.js';
import { duplicatesReport, type DuplicatesPage } from './duplicates.js';
import type { DuplicatesQuery } from './duplicates-params.js';
import { reportEvent } from './reports.js';
import type { ReportBody } from './report-types.js';
import { resolveOperation, type ResolveBody } from './resolve.js';
import { startSweeper, sweepExpiredLeases } from './sweeper.js';
import type { PeriodicTask } from '../core/periodic-task.js';
import type { WorkScope } from '../store/work-scope.js';
import { KnownKeys } from './known-keys.js';

export interface OperationsDeps extends OperationDeps {
  policies: Policies;
}

/** Event types whose payload a gateway of the account may read in a timeline: its own command and the responses. */
const GATEWAY_PAYLOADS = new Set(['attempted', 'completed', 'resolved']);

/**
 * The operations domain behind its routes: who may do what, then the claim,
 * reports, resolution and reads. `deps` is read at call time, so an approvals
 * gate wired into the context after construction is seen. `workScope` is the request's
 * (http/deadline.ts): what it writes is dropped once the request is abandoned.
 */
export class Operations {
  /** Keys this instance saw taken (their retries look the key up first) and the finished rows its replays read. */
  private readonly knownKeys = new KnownKeys();

  constructor(private readonly deps: OperationsDeps) {}

  /** Claims are made in the caller's own account (an admin's too). */
  async claim(principal: Principal, idempotencyKey: string, body: ClaimBody, workScope?: WorkScope): Promise<ClaimAnswer> {
    return claimOperation(this.deps, toClaimRequest(this.deps.policies, principal, idempotencyKey, body), { workScope, knownKeys: this.knownKeys });
  }

  async report(principal: Principal, id: string, body: ReportBody, workScope?: WorkScope): Promise<OperationJson> {
    requireRole(principal, 'gateway', 'admin');
    const accountId = await accountForOperation(this.deps.store.db, principal, id, ['admin']);
    return reportEvent(this.deps, principal, accountId, id, body, workScope);
  }

  async resolve(principal: Principal, id: string, body: ResolveBody, workScope?: WorkScope): Promise<OperationJson> {
    requireRole(principal, 'admin');
    const accountId = await accountForOperation(this.deps.store.db, principal, id, ['admin']);
    return resolveOperation(this.deps, principal, accountId, id, body, workScope);
  }

  /** A read, but one that finds a lease run out records it (reads.ts): hence the scope. */
  async get(principal: Principal, id: string, workScope?: WorkScope): Promise<OperationJson> {
    return readOperation(this.deps, await this.readableAccount(principal, id), id, workScope);
  }

  /** Search (docs/http-api.md): a gateway in its own account, auditors and admins in the account they name. */
  async search(principal: Principal, query: SearchQuery): Promise<OperationPage> {
    requireRole(principal, 'gateway', 'admin', 'auditor');
    return searchOperations(this.deps, accountForReview(principal, query.accountId), query);
  }

  /** Possible duplicates: an auditor's or admin's report over any account. */
  async duplicates(principal: Principal, query: DuplicatesQuery): Promise<DuplicatesPage> {
    requireRole(principal, 'auditor', 'admin');
    return duplicatesReport(this.deps, accountForReview(principal, query.accountId), query);
  }

  async timeline(principal: Principal, id: string): Promise<{ operation_id: string; events: TimelineEvent[] }> {
    const accountId = await this.readableAccount(principal, id);
    // Auditors and admins read every payload; a gateway its own commands and the responses, not approvers' reasons.
    const seesAll = hasRole(principal, 'admin', 'auditor');
    return readTimeline(this.deps, accountId, id, (type) => seesAll || GATEWAY_PAYLOADS.has(type));
  }

  sweepExpiredLeases(): Promise<number> {
    return sweepExpiredLeases(this.deps);
  }

  startSweeper(onError: (error: unknown) => void): PeriodicTask {
    return startSweeper(this.deps, onError);
  }

  private readableAccount(principal: Principal, id: string): Promise<string> {
    requireRole(principal, 'gateway', 'admin', 'auditor');
    return accountForOperation(this.deps.store.db, principal, id, ['admin', 'auditor']);
  }
}
