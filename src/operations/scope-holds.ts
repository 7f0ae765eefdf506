import { DomainError, InvariantError } from '../core/errors.js';
import type { Db } from '../store/store.js';
import { askedEvent } from './operation-events.js';
import { lockOperation, lockOperationByKey } from './operation-rows.js';
import { isTerminal } from './states.js';
import { approvalRanOut } from './claim-approval.js';
import { askerOf, type ClaimResult, type ClaimScope } from './claim-types.js';
import type { OperationRow } from './operation-json.js';

/**
 * Taken; busy (the refusal to answer, already recorded); held by an operation with the claim's
 * own key; or held by the operation that has the claim's business key (`reused`).
 */
export type ScopeTaking = { taken: true } | { refusal: ClaimResult } | { ownKey: OperationRow } | { sameBusiness: OperationRow };

/**
 * Rounds of the take. Each round that does not answer removes a dead hold (its holder ended, or
 * its approval ran out); only a concurrent claim can have put a holder in its place since, and
 * that one is live. Three rounds are more than any interleaving needs.
 */
const TAKE_ROUNDS = 3;

/**
 * Takes the claim's exclusive scope for operation `id` through the primary key of scope_holds.
 * A scope is held by an operation that is not terminal, except one that can go on only with a
 * new approval (its request ran out undecided, or its grant before a lease was taken): nobody may
 * ever decide on it, and it must not block the scope for good. Its hold is taken over here, in
 * the claim's transaction, with the holder's row locked: of claims racing for it, one takes it
 * and the others find that one holding it. When a live operation holds the scope, the refusal
 * `scope_busy` is recorded against the holder and the claim creates nothing.
 */
export async function takeScope(scope: ClaimScope, id: string): Promise<ScopeTaking> {
  const { deps, trx, request } = scope;
  const scopeName = request.exclusiveScope!;
  for (let round = 0; round < TAKE_ROUNDS; round++) {
    const inserted = await trx.insertInto('scope_holds')
      .values({ account_id: request.accountId, scope: scopeName, operation_id: id })
      .onConflict((oc) => oc.columns(['account_id', 'scope']).doNothing())
      .returning('operation_id').executeTakeFirst();
    if (inserted) return { taken: true };
    const hold = await trx.selectFrom('scope_holds').select('operation_id')
      .where('account_id', '=', request.accountId).where('scope', '=', scopeName).executeTakeFirst();
    // The operation taking its scope again holds it still (retakeScope).
    if (hold?.operation_id === id) return { taken: true };
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
    if (holder && !isTerminal(holder.state) && !(await approvalRanOut(scope, holder))) {
      await deps.ledger.append(trx, askedEvent(holder, 'scope_busy', askerOf(request)));
      return {
        refusal: { refusal: new DomainError('scope_busy', `the exclusive scope is held by operation ${holder.id} until it ends; retry later`, {
          operation_id: holder.id,
        }) },
      };
    }
    // Only the dead holder's hold: another claim may have taken the scope over since we read it.
    if (hold) await giveBackScope(trx, request.accountId, hold.operation_id);
  }
  throw new InvariantError('the exclusive scope could not be taken');
}

/**
 * The scope of an operation asked for again after it may have lost it: it ended and is taken up
 * again (`canceled`), or its approval ran out and another operation took the scope over. Null
 * when it holds the scope (still, or again); else the `scope_busy` refusal, recorded on the holder.
 */
export async function retakeScope(scope: ClaimScope, row: OperationRow): Promise<ClaimResult | null> {
  // The scope and business key the operation was created with, not what today's policy makes of the command.
  const own = { ...scope.request, exclusiveScope: row.exclusive_scope, businessKey: row.business_key };
  const taking = await takeScope({ ...scope, request: own }, row.id);
  if ('refusal' in taking) return taking.refusal;
  // Its key and business key are its own: no other operation can hold the scope with either.
  if (!('taken' in taking)) throw new InvariantError(`operation ${row.id} met another operation with its own key or business key`);
  return null;
}

/** Gives back the hold of one operation, if it still has it: a claim that lost the insert to a concurrent one, or a dead holder's. */
export async function giveBackScope(trx: Db, accountId: string, operationId: string): Promise<void> {
  await trx.deleteFrom('scope_holds').where('account_id', '=', accountId).where('operation_id', '=', operationId).execute();
}
