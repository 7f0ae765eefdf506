import type { EventHeaderValues } from '../core/event-shape.js';
import type { JsonValue } from '../core/json.js';

export const EVENT_TYPES = [
  'attempted', 'retried', 'replayed', 'conflicted', 'reused', 'scope_busy',
  'approval_requested', 'approval_decided', 'approved', 'denied', 'approval_expired',
  'leased', 'sent', 'accepted', 'completed', 'canceled', 'lease_expired', 'resolved',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * What domain code says about an event: the header's own values (absent = null, event-shape.ts)
 * and the payload; the ledger adds seq, ts, the hashes and the sealing.
 */
export type EventInput = Omit<EventHeaderValues, 'seq' | 'ts' | 'type' | 'actor' | 'payload_hash' | 'prev_hash'> & {
  type: EventType;
  actor: string | null;
  /** Sensitive content (command, response body, summary, reasons): encrypted at rest. */
  payload?: JsonValue;
};

export interface AppendedEvent {
  seq: number;
  hash: string;
  ts: string;
}
