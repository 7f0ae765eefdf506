// Wire types of the Gatehouse v1 HTTP contract (docs/http-api.md), as a client sees them.
// They describe what the server promises to send; members the contract leaves open are typed loosely.
import type { JsonObject, JsonValue } from '../core/json.js';
import type { Checkpoint, OperationJson, OperationReport, OperationState, OperationSummary, StoredResponse } from '../core/wire.js';
import type { SignedGrant } from '../core/grant.js';
import type { EventHeader } from '../core/event-shape.js';
import type { ClaimOperationBody, ResolveOperationBody } from '../core/request-bodies.js';

export type { Checkpoint, EventHeader, JsonObject, JsonValue, OperationJson, OperationState, OperationSummary, SignedGrant, StoredResponse };
export { TERMINAL_STATES } from '../core/wire.js';

export type Role = 'gateway' | 'approver' | 'auditor' | 'admin';


export type Operation = OperationJson;

export interface Lease {
  token: string;
  expires_at: string;
}

export type Summary = OperationSummary;

export type Grant = SignedGrant;

export type ApprovalState = 'pending' | 'approved' | 'denied' | 'expired';

export interface ApprovalDecision {
  approver?: string;
  decision: 'approve' | 'deny';
  reason?: string | null;
  decided_at?: string;
  [member: string]: JsonValue | undefined;
}

export interface Approval {
  id: string;
  operation_id: string;
  account_id: string;
  idempotency_key: string;
  fingerprint: string;
  summary: Summary | null;
  command?: JsonValue;
  requested_by: string;
  requested_at: string;
  expires_at: string;
  approvers_required: number;
  decisions: ApprovalDecision[];
  state: ApprovalState;
}

/** The body of `POST /v1/operations`: the server's own type (schema/requests/claim-operation.json). */
export type ClaimRequest = ClaimOperationBody;

interface ClaimBase {
  /** HTTP status of the answer. */
  status: number;
  operation: Operation;
  /**
   * Seconds from the `Retry-After` header, when the server sent one. On `in_progress` it is a
   * short hint (1 s by default, never past the lease's end): ask again then, not at the lease end.
   */
  retryAfterSeconds?: number;
}

export type ClaimResponse =
  | (ClaimBase & { outcome: 'created'; execute: true; lease: Lease })
  | (ClaimBase & { outcome: 'approved'; execute: true; lease: Lease; grant: Grant })
  | (ClaimBase & { outcome: 'approval_required'; execute: false; approval: Approval })
  | (ClaimBase & { outcome: 'denied'; execute: false; approval?: Approval })
  | (ClaimBase & { outcome: 'in_progress'; execute: false })
  | (ClaimBase & { outcome: 'unknown'; execute: false })
  | (ClaimBase & { outcome: 'replayed'; execute: false; response: StoredResponse | null })
  | (ClaimBase & { outcome: 'reused'; execute: false; response?: StoredResponse | null });

export type ClaimOutcome = ClaimResponse['outcome'];

export type OperationEvent = OperationReport;

/** The body of `POST /v1/operations/{id}/resolve` (schema/requests/resolve-operation.json). */
export type ResolveRequest = ResolveOperationBody;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface TimelineEvent {
  [member: string]: JsonValue;
}

export interface SigningKey {
  key_id: string;
  /** Raw 32-byte Ed25519 public key, base64. */
  public_key: string;
  algorithm?: string;
  /** C2SP note verifier key `<name>+<hash>+<base64>`. */
  note_verifier?: string;
  [member: string]: JsonValue | undefined;
}

export interface AuditEvent {
  header: EventHeader;
  hash: string;
  payload: string | null;
}

export interface AuditPage {
  items: AuditEvent[];
  next_cursor: number | string | null;
}


export interface Principal {
  id: string;
  account_id: string;
  roles: Role[];
  name: string | null;
}
