import { DomainError, InvariantError } from '../core/errors.js';
import type { Db } from '../store/store.js';
import { askedEvent } from './operation-events.js';
import { lockOperation, lockOperationByKey } from './operation-rows.js';
import { isTerminal } from './states.js';
import { askerOf, type ClaimResult, type ClaimScope } from './claim-types.js';
import type { OperationRow } from './operation-json.js';

/**
 * Taken; busy (the refusal to answer, already recorded); held by an operation with the claim's
 * own key; or held by the operation that has the claim's business key (`reused`).
 */
export type ScopeTaking = { taken: true } | { refusal: ClaimResult } | { ownKey: OperationRow } | { sameBusiness: OperationRow };

/**
 * Takes the claim's exclusive scope for operation `id` through the primary key
 * of scope_holds. When a non-terminal operation holds it, the refusal `scope_busy`
 * is recorded against the holder and the claim creates nothing.
 */
export async function takeScope(scope: ClaimScope, id: string): Promise<ScopeTaking> {
  const { deps, trx, request } = scope;
  const scopeName = request.exclusiveScope!;
  // Two rounds: a hold left by an operation that has since ended is removed once, then the insert is tried again.
  for (let round = 0; round < 2; round++) {
    const inserted = await trx.insertInto('scope_holds')
      .values({ account_id: request.accountId, scope: scopeName, operation_id: id })
      .onConflict((oc) => oc.columns(['account_id', 'scope']).doNothing())
      .returning('operation_id').executeTakeFirst();
    if (inserted) return { taken: true };
    const hold = await trx.selectFrom('scope_holds').select('operation_id')
      .where('account_id', '=', request.accountId).where('scope', '=', scopeName).executeTakeFirst();
    const holder = hold && await lockOperation(deps.store, trx, request.accountId, hold.operation_id);
    if (holder && holder.idempotency_key === request.idempotencyKey) {
      // A concurrent identical claim created the operation while we waited on its hold (PostgreSQL).
      const own = await lockOperationByKey(deps.store, trx, request.accountId, request.idempotencyKey);
      return { ownKey: own! };
    }
    // The operation that took the claim's business key while we waited on its hold (PostgreSQL,
    // another instance): the claim is `reused`, as it is when that operation committed before
    // the claim looked its business key up. Its hold says nothing the business key does not.
    if (holder && request.businessKey !== null && holder.business_key === request.businessKey) return { sameBusiness: holder };
    if (holder && !isTerminal(holder.state)) {
      await deps.ledger.append(trx, askedEvent(holder, 'scope_busy', askerOf(request)));
      return {
        refusal: { refusal: new DomainError('scope_busy', `the exclusive scope is held by operation ${holder.id} until it ends; retry later`, {
          operation_id: holder.id,
        }) },
      };
    }
    await trx.deleteFrom('scope_holds').where('account_id', '=', request.accountId).where('scope', '=', scopeName).execute();
  }
  throw new InvariantError('the exclusive scope could not be taken');
}

/** A claim that lost the insert to a concurrent one gives back the scope it took for its own id. */
export async function giveBackScope(trx: Db, accountId: string, operationId: string): Promise<void> {
  await trx.deleteFrom('scope_holds').where('account_id', '=', accountId).where('operation_id', '=', operationId).execute();
}
