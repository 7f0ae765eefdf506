import type { JsonValue } from '../core/json.js';

export const EVENT_TYPES = [
  'attempted', 'retried', 'replayed', 'conflicted', 'reused', 'scope_busy',
  'approval_requested', 'approval_decided', 'approved', 'denied', 'approval_expired',
  'leased', 'sent', 'accepted', 'completed', 'canceled', 'lease_expired', 'resolved',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What domain code says about an event; the ledger adds seq, ts, hashes and sealing. */
export interface EventInput {
  account_id: string;
  type: EventType;
  actor: string | null;
  operation_id?: string | null;
  idempotency_key?: string | null;
  fingerprint?: string | null;
  agent_run_id?: string | null;
  method?: string | null;
  route?: string | null;
  state?: string | null;
  provider_ref?: string | null;
  response_status?: number | null;
  /** Sensitive content (command, response body, summary, reasons): encrypted at rest. */
  payload?: JsonValue;
}

export interface AppendedEvent {
  seq: number;
  hash: string;
  ts: string;
}
