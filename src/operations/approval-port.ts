import type { OperationPort } from '../approvals/seam.js';
import { InvariantError } from '../core/errors.js';
import type { Clock } from '../core/time.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Store } from '../store/store.js';
import { hasClaimed } from './claimants.js';
import { lockOperation, pointAtApproval } from './operation-rows.js';
import { applyTransition } from './transitions.js';

/** The port the operations domain hands to approvals: their decisions go through the transition table like every other change. */
export function operationPort(deps: { store: Store; ledger: Ledger; clock: Clock }): OperationPort {
  return {
    async transition(trx, operation, change, event) {
      const row = await lockOperation(deps.store, trx, operation.account_id, operation.id);
      if (!row) throw new InvariantError(`an approval points at the missing operation ${operation.id}`);
      await applyTransition(trx, deps.ledger, row, change, { actor: event.actor, payload: event.payload, nowMs: deps.clock.now() });
    },
    pointAtApproval: (trx, operation, approvalId) => pointAtApproval(trx, operation.account_id, operation.id, approvalId),
    hasClaimed: (trx, operation, principalId) => hasClaimed(trx, operation.account_id, operation.id, principalId),
  };
}
