import { InvariantError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { rfc3339 } from '../core/time.js';
import { issueLease, type IssuedLease } from './lease.js';
import { changeEvent } from './operation-events.js';
import { unfinishedOperationJson, type OperationRow } from './operation-json.js';
import { lockOperation, lockOperationByKey, operationInsert } from './operation-rows.js';
import { giveBackScope, takeScope } from './scope-holds.js';
import { answerExisting, answerReused } from './claim-existing.js';
import { gateOrRefusal, requestApproval } from './claim-approval.js';
import type { ClaimAnswer, ClaimRequest, ClaimResult, ClaimScope, OperationDeps } from './claim-types.js';
import { transactOrRefuse } from '../store/refusals.js';
import type { WorkScope } from '../store/work-scope.js';
import type { KnownKeys } from './known-keys.js';

/**
 * The idempotent claim (docs/retry-contract.md). The unique constraint on
 * (account, idempotency key) decides who creates the operation, never a
 * check-then-insert: of any number of concurrent identical claims exactly one
 * inserts; the others find its row and answer from it.
 */
export async function claimOperation(
  deps: OperationDeps, request: ClaimRequest, options: { workScope?: WorkScope; knownKeys?: KnownKeys } = {},
): Promise<ClaimAnswer> {
  const { knownKeys } = options;
  const known = knownKeys?.lookup(request.accountId, request.idempotencyKey);
  const { answer } = await transactOrRefuse(deps.store, async (trx, work): Promise<ClaimResult> => {
    const scope: ClaimScope = { deps, trx, work, request, nowMs: deps.clock.now(), knownKeys };
    // Most claims carry a new key: insert first, and look the key up only when a unique constraint
    // says it (or the business key) is taken. A key this instance saw taken is most likely a
    // retry (known-keys.ts), and a scoped claim must not meet its own operation's hold as
    // scope_busy (a scope is taken before its operation exists): those look up first. A finished
    // operation's row never changes again: when this instance holds it, it is not read again.
    if (request.exclusiveScope === null && known === undefined) return createOperation(scope);
    const existing = typeof known === 'object' ? known : await lockOperationByKey(deps.store, trx, request.accountId, request.idempotencyKey);
    if (existing) return answerExisting(scope, existing);
    const sameBusiness = await findByBusinessKey(scope);
    if (sameBusiness) return answerReused(scope, sameBusiness);
    return createOperation(scope);
  }, { account: request.accountId, scope: options.workScope });
  knownKeys?.remember(request.accountId, request.idempotencyKey);
  return answer;
}

async function findByBusinessKey(scope: ClaimScope): Promise<OperationRow | undefined> {
  const { deps, trx, request } = scope;
  if (request.businessKey === null) return undefined;
  const found = await trx.selectFrom('operations').select('id')
    .where('account_id', '=', request.accountId).where('business_key', '=', request.businessKey).executeTakeFirst();
  return found && lockOperation(deps.store, trx, request.accountId, found.id);
}

async function createOperation(scope: ClaimScope): Promise<ClaimResult> {
  const { deps, trx, request, nowMs } = scope;
  const needsApproval = request.policy.approval !== null;
  const gated = needsApproval ? gateOrRefusal(deps.approvals) : null;
  if (gated && 'refusal' in gated) return gated;

  const id = newId('op', nowMs);
  // The scope is taken before the operation exists: a refused claim creates no operation.
  if (request.exclusiveScope !== null) {
    const taking = await takeScope(scope, id);
    if ('refusal' in taking) return taking.refusal;
    // A concurrent identical claim created the operation while we waited on its hold (PostgreSQL).
    if ('ownKey' in taking) return answerExisting(scope, taking.ownKey);
    if ('sameBusiness' in taking) return answerReused(scope, taking.sameBusiness);
  }
  const lease = needsApproval ? null : issueLease(nowMs, request.leaseSeconds);
  const inserted = newRow(request, id, nowMs, lease);
  // Any unique constraint (key or business key) makes a concurrent claim lose quietly; it then answers from the winner.
  const attempted = changeEvent(inserted, 'attempted', request.principal.id, request.command);
  if (!(await deps.ledger.appendAfterInsert(trx, operationInsert(inserted), attempted))) return answerLoser(scope, id);

  if (gated) return requestApproval(scope, gated.gate, inserted);
  return { answer: { outcome: 'created', execute: true, operation: unfinishedOperationJson(inserted), lease: lease!.lease } };
}

/** The key or the business key is taken (a retry, or a concurrent claim that inserted first): give back our scope hold and answer from that row. */
async function answerLoser(scope: ClaimScope, ourId: string): Promise<ClaimResult> {
  const { deps, trx, request } = scope;
  if (request.exclusiveScope !== null) await giveBackScope(trx, request.accountId, ourId);
  const byKey = await lockOperationByKey(deps.store, trx, request.accountId, request.idempotencyKey);
  if (byKey) return answerExisting(scope, byKey);
  const byBusiness = await findByBusinessKey(scope);
  if (byBusiness) return answerReused(scope, byBusiness);
  throw new InvariantError('the claim lost a unique constraint to an operation it cannot find');
}

function newRow(request: ClaimRequest, id: string, nowMs: number, lease: IssuedLease | null): OperationRow {
  const now = rfc3339(nowMs);
  return {
    id,
    account_id: request.accountId,
    idempotency_key: request.idempotencyKey,
    fingerprint: request.fingerprint,
    method: request.method,
    route: request.route,
    state: lease ? 'running' : 'awaiting_approval',
    business_key: request.businessKey,
    exclusive_scope: request.exclusiveScope,
    agent_run_id: request.agentRunId,
    provider_ref: null,
    requested_by: request.principal.id,
    lease_seconds: request.leaseSeconds,
    lease_token_hash: lease?.tokenHash ?? null,
    lease_expires_at: lease?.expiresAtMs ?? null,
    response_seq: null,
    response_status: null,
    approval_id: null,
    created_at: now,
    updated_at: now,
    version: 1,
  };
}
