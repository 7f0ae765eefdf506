import type { JsonValue } from './json.js';

// The contract's wire formats (docs/http-api.md, docs/formats.md) that the service writes and the client
// reads: one definition, so the two cannot drift apart. Types and constants only.

export const OPERATION_STATES = [
  'awaiting_approval', 'approved', 'running', 'sent', 'accepted',
  'succeeded', 'failed', 'denied', 'canceled', 'unknown',
] as const;
export type OperationState = (typeof OPERATION_STATES)[number];

export const TERMINAL_STATES: readonly OperationState[] = ['succeeded', 'failed', 'canceled', 'denied'];

/** The response a gateway stores with `completed` (or an admin with `resolve`) and that retries replay. */
export interface StoredResponse {
  /** 200–599: a replay is the write's final answer, which a 1xx never is, so storing one is refused. */
  status: number;
  headers?: Record<string, string>;
  body?: JsonValue;
}

/** The contract's operation JSON: exactly these members, and `response` once terminal. */
export interface OperationJson {
  id: string;
  account_id: string;
  idempotency_key: string;
  fingerprint: string;
  method: string;
  route: string;
  state: OperationState;
  business_key: string | null;
  exclusive_scope: string | null;
  agent_run_id: string | null;
  provider_ref: string | null;
  created_at: string;
  updated_at: string;
  response?: StoredResponse | null;
}

/** What a human approver is shown about an operation (`summary` of a claim). */
export interface OperationSummary {
  target?: string;
  operation?: string;
  consequence?: string;
  reversible?: boolean;
}

/** A signed checkpoint as the API returns it; the note is what is signed, created_at is informational. */
export interface Checkpoint {
  account_id: string;
  tree_size: number;
  root_hash: string;
  created_at: string;
  note: string;
}

/** A lease holder's report (`POST /v1/operations/{id}/events`), one shape per type. */
export type OperationReport =
  | { type: 'heartbeat'; lease_token: string }
  | { type: 'sent'; lease_token: string }
  | { type: 'accepted'; lease_token: string; provider_ref: string }
  | { type: 'completed'; lease_token: string; outcome: 'succeeded' | 'failed'; response: StoredResponse }
  | { type: 'canceled'; lease_token: string };
