import type { DomainError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import type { ApprovalGate, ApprovalView, Grant, OperationSummary } from '../approvals/seam.js';
import type { Ledger } from '../ledger/ledger.js';
import type { MatchedPolicy } from '../policies/policies.js';
import type { Principal } from '../principals/roles.js';
import type { Clock } from '../core/time.js';
import type { Db, Store, UnitOfWork } from '../store/store.js';
import type { Lease } from './lease.js';
import type { OperationJson, StoredResponse } from './operation-json.js';
import type { Asker } from './operation-events.js';
import type { KnownKeys } from './known-keys.js';

/** What the operations domain needs from the composition root; `approvals` is read at call time (it may be wired later). */
export interface OperationDeps {
  store: Store;
  ledger: Ledger;
  clock: Clock;
  approvals?: ApprovalGate;
}

/** A claim after validation and the policy: everything the transaction decides on. */
export interface ClaimRequest {
  principal: Principal;
  accountId: string;
  idempotencyKey: string;
  method: string;
  route: string;
  command: JsonValue;
  fingerprint: string;
  policy: MatchedPolicy;
  agentRunId: string | null;
  businessKey: string | null;
  exclusiveScope: string | null;
  leaseSeconds: number;
  summary: OperationSummary | null;
}

export type ClaimOutcome = 'created' | 'approval_required' | 'approved' | 'denied' | 'in_progress' | 'unknown' | 'replayed' | 'reused';

export interface ClaimAnswer {
  outcome: ClaimOutcome;
  execute: boolean;
  operation: OperationJson;
  lease?: Lease;
  response?: StoredResponse | null;
  approval?: ApprovalView;
  grant?: Grant;
  /** For `in_progress`: a short hint in whole seconds (never past the lease's end), for `Retry-After`. */
  retryAfterSeconds?: number;
}

/**
 * A claim transaction ends in an answer or a refusal; a refusal is returned,
 * not thrown, so the events it records (conflicted, scope_busy, lease_expired)
 * commit with it.
 */
export type ClaimResult = { answer: ClaimAnswer } | { refusal: DomainError };

/** One claim transaction's working set. */
export interface ClaimScope {
  deps: OperationDeps;
  trx: Db;
  /** After-commit work of the claim's transaction (the approval webhook's wake-up). */
  work: UnitOfWork;
  request: ClaimRequest;
  nowMs: number;
  /** The instance's known keys: a finished row the claim answers from is kept there (known-keys.ts). */
  knownKeys?: KnownKeys;
}

export function askerOf(request: ClaimRequest): Asker {
  return {
    actor: request.principal.id,
    idempotency_key: request.idempotencyKey,
    fingerprint: request.fingerprint,
    agent_run_id: request.agentRunId,
    method: request.method,
    route: request.route,
  };
}
