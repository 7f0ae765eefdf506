/** Operation states (docs/retry-contract.md#states). Which change may start from which state is the table in transitions.ts. */
import { TERMINAL_STATES, type OperationState } from '../core/wire.js';

export { OPERATION_STATES, TERMINAL_STATES, type OperationState } from '../core/wire.js';

/** States that hold a lease: when it runs out the write may or may not have happened. */
export const LEASED_STATES: readonly OperationState[] = ['running', 'sent', 'accepted'];

export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

export function isLeased(state: string): boolean {
  return (LEASED_STATES as readonly string[]).includes(state);
}
