/** Operation states (docs/retry-contract.md#states) and the reports the state machine allows from each. */
import { TERMINAL_STATES, type OperationState } from '../core/wire.js';

export { OPERATION_STATES, TERMINAL_STATES, type OperationState } from '../core/wire.js';

/** States that hold a lease: when it runs out the write may or may not have happened. */
export const LEASED_STATES: readonly OperationState[] = ['running', 'sent', 'accepted'];

export type ReportType = 'heartbeat' | 'sent' | 'accepted' | 'completed' | 'canceled';

/** Which state each report may start from; heartbeat is allowed in every leased state. */
const ALLOWED_FROM: Record<ReportType, readonly OperationState[]> = {
  heartbeat: LEASED_STATES,
  sent: ['running'],
  accepted: ['sent'],
  completed: ['sent', 'accepted'],
  canceled: ['running'],
};

export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

export function isLeased(state: string): boolean {
  return (LEASED_STATES as readonly string[]).includes(state);
}

/**
 * The one way out of a terminal state: a claim with the same key and fingerprint on a `canceled`
 * operation leases it again (docs/retry-contract.md), because the write was never made. No report can do
 * this, and no other terminal state allows it.
 */
const LEASABLE_AGAIN: readonly OperationState[] = ['canceled'];

export function mayLeaseAgain(state: string): boolean {
  return (LEASABLE_AGAIN as readonly string[]).includes(state);
}

export function reportAllowed(type: ReportType, state: string): boolean {
  return (ALLOWED_FROM[type] as readonly string[]).includes(state);
}
