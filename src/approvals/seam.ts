import type { Db, UnitOfWork } from '../store/store.js';
import type { DomainError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import type { Principal } from '../principals/roles.js';
import type { ApprovalPolicy } from '../policies/policies.js';
import type { OperationJson, OperationSummary } from '../core/wire.js';

export type { OperationSummary };

/** The operation as the approvals domain needs to see it: the contract's fields and its current approval. */
export type GatedOperation = Pick<OperationJson, 'id' | 'account_id' | 'idempotency_key' | 'fingerprint' | 'method' | 'route' | 'agent_run_id'> & {
  approval_id: string | null;
};

/** The public JSON of an approval (docs/http-api.md#approvals) and of a grant (docs/formats.md#grants). */
export type ApprovalView = Record<string, unknown> & { id: string; state: 'pending' | 'approved' | 'denied' | 'expired' };
export type Grant = Record<string, unknown> & { approval_id: string; expires_at: string; signature: string };

export type ApprovalStanding =
  | { kind: 'pending'; approval: ApprovalView }
  | { kind: 'granted'; approval: ApprovalView; grant: Grant }
  | { kind: 'denied'; approval: ApprovalView }
  /** The request or the grant ran out before the lease: a new pending approval was made (and recorded). */
  | { kind: 'renewed'; approval: ApprovalView };

/**
 * How the claim talks to approvals, always inside the claim's transaction so
 * the operation's state and the approval's events commit together. `work` carries
 * what runs after that commit (waking the webhook's delivery loop).
 */
export interface ApprovalGate {
  /** A new operation whose policy needs approval: creates the pending approval and appends `approval_requested`. */
  request(trx: Db, work: UnitOfWork, input: {
    operation: GatedOperation; requestedBy: Principal; policy: ApprovalPolicy; summary: OperationSummary | null; command: JsonValue;
  }): Promise<ApprovalView>;
  /**
   * A retry of an operation awaiting approval or approved but not leased: where its approval
   * stands now. When it ran out, the new request is the retrying principal's (`askedBy`).
   */
  standing(trx: Db, work: UnitOfWork, operation: GatedOperation, policy: ApprovalPolicy, askedBy: { id: string }): Promise<ApprovalStanding>;
  /**
   * The `sent` report of an approved operation: null while the grant is valid. Once it has
   * expired, the operation goes back to awaiting a new approval inside `trx` and the
   * `approval_expired` refusal is returned for the caller to answer after the commit.
   */
  refuseExpiredGrant(trx: Db, work: UnitOfWork, operation: GatedOperation): Promise<DomainError | null>;
  /**
   * Whether the operation (awaiting approval or approved, not leased) can go on only with a new
   * approval: its request ran out undecided, or its grant ran out. An expiry not recorded yet is
   * recorded now (the operation then awaits a new approval), as its next claim would record it.
   */
  expireIfRunOut(trx: Db, operation: GatedOperation): Promise<boolean>;
}

/** The operation an approval is about, by its keys. */
export type OperationRef = Pick<GatedOperation, 'id' | 'account_id'>;

/** The changes of an operation's state that approval decisions cause (rows of the operations domain's transition table). */
export type ApprovalTransition = 'approved' | 'denied' | 'approval_expired';

/**
 * The other direction: what the approvals domain may change on an operation. The operations
 * domain owns the table and its state machine and hands this port to approvals at start-up;
 * approvals never write `operations` or `scope_holds` themselves. Always inside the caller's transaction.
 */
export interface OperationPort {
  /** Moves the operation and records the transition's event with this actor and payload (and frees the scope of a denied one). */
  transition(trx: Db, operation: OperationRef, change: ApprovalTransition, event: { actor: string | null; payload: JsonValue }): Promise<void>;
  /** Points the operation at its current approval. */
  pointAtApproval(trx: Db, operation: OperationRef, approvalId: string): Promise<void>;
  /**
   * Whether this principal has asked for the operation: made its first claim or any later claim
   * call on it (a retry, a replay, a business-key reuse, a mismatch under its key, the claim that
   * took the lease). Such a principal is a requester and may not decide on its approval.
   */
  hasClaimed(trx: Db, operation: OperationRef, principalId: string): Promise<boolean>;
}
