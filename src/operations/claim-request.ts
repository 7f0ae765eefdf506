import type { ClaimOperationBody } from '../core/request-bodies.js';
import { DomainError } from '../core/errors.js';
import type { Policies } from '../policies/policies.js';
import type { Principal } from '../principals/roles.js';
import { prepareIntent } from './intent.js';
import type { ClaimRequest } from './claim-types.js';

/** The body of `POST /v1/operations` after its schema (schema/requests/claim-operation.json). */
export type ClaimBody = ClaimOperationBody;

const DEFAULT_LEASE_SECONDS = 60;
/** 1–255 visible ASCII characters (docs/http-api.md, the claim). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Untrusted header: absent and malformed are different mistakes with different codes. */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) throw new DomainError('idempotency_key_missing', 'send an Idempotency-Key header: 1-255 visible ASCII characters naming this write');
  if (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header)) {
    throw new DomainError('idempotency_key_invalid', 'the Idempotency-Key header must be 1-255 visible ASCII characters (0x21-0x7E)');
  }
  return header;
}

/**
 * The claim as the transaction sees it: route, method and command through the
 * same prepareIntent as `POST /v1/fingerprint`, so the two never disagree.
 * A policy's business_key / exclusive_scope template wins over a value in the
 * body: the operator's policy says what counts as one business event and what
 * must not run at once, and an agent must not be able to opt out of that by
 * sending its own value. The body's values apply where the policy has no template.
 */
export function toClaimRequest(policies: Policies, principal: Principal, idempotencyKey: string, body: ClaimBody): ClaimRequest {
  const intent = prepareIntent(policies, principal.account_id, body);
  return {
    principal,
    accountId: principal.account_id,
    idempotencyKey,
    method: intent.method,
    route: intent.route,
    command: intent.command,
    fingerprint: intent.fingerprint,
    policy: intent.policy,
    agentRunId: body.agent_run_id ?? null,
    businessKey: intent.policy.businessKey(intent.command) ?? body.business_key ?? null,
    exclusiveScope: intent.policy.exclusiveScope(intent.command) ?? body.exclusive_scope ?? null,
    leaseSeconds: body.lease_seconds ?? DEFAULT_LEASE_SECONDS,
    summary: body.summary ?? null,
  };
}
