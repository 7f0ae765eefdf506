/**
 * The JSON request bodies the server accepts, as TypeScript. Each mirrors one schema in
 * schema/requests/, which is the source: Ajv validates every body against it at the HTTP edge
 * (src/http/request-schemas.ts), the OpenAPI document refers to it, and
 * test/http/request-schemas.test.ts fails when a type and its schema disagree on a member, on
 * whether it is required, or on whether it may be null. The server and the client use these
 * same types. Types only.
 */
import type { JsonValue } from './json.js';
import type { OperationSummary, StoredResponse } from './wire.js';

/** `POST /v1/operations` (schema/requests/claim-operation.json). */
export interface ClaimOperationBody {
  method: string;
  route: string;
  command: JsonValue;
  agent_run_id?: string | null;
  business_key?: string | null;
  exclusive_scope?: string | null;
  lease_seconds?: number;
  summary?: OperationSummary | null;
}

/** `POST /v1/operations/{id}/events` (report-operation.json); which members each type needs is checked after the schema. */
export interface ReportOperationBody {
  type: 'heartbeat' | 'sent' | 'accepted' | 'completed' | 'canceled';
  lease_token: string;
  provider_ref?: string;
  outcome?: 'succeeded' | 'failed';
  response?: StoredResponse;
}

/** `POST /v1/operations/{id}/resolve` (resolve-operation.json). */
export interface ResolveOperationBody {
  state: 'succeeded' | 'failed' | 'canceled';
  note: string;
  provider_ref?: string;
  response?: StoredResponse;
}

/** `POST /v1/fingerprint` (fingerprint.json): other members are allowed and ignored. */
export interface FingerprintBody {
  method: string;
  route: string;
  command: JsonValue;
}

/** `POST /v1/principals` (create-principal.json). */
export interface CreatePrincipalBody {
  account_id: string;
  roles: Array<'gateway' | 'approver' | 'auditor' | 'admin'>;
  name?: string | null;
}

/** `POST /v1/approvals/{id}/decisions` (decide-approval.json). */
export interface DecideApprovalBody {
  decision: 'approve' | 'deny';
  fingerprint: string;
  reason?: string | null;
}

/** `POST /v1/audit/checkpoints` (create-checkpoint.json). */
export interface CreateCheckpointBody {
  account_id: string;
}
