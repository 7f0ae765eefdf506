import type { DomainError, ErrorCode } from '../core/errors.js';

/** The HTTP status of every domain error code: the one place a code becomes a status. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  headers_too_large: 431,
  unsupported_media_type: 415,
  invalid_json: 400,
  duplicate_member: 400,
  unsafe_number: 400,
  invalid_request: 400,
  invalid_route: 400,
  command_invalid: 400,
  idempotency_key_missing: 400,
  idempotency_key_invalid: 400,
  fingerprint_mismatch: 422,
  decision_fingerprint_mismatch: 409,
  scope_busy: 409,
  lease_lost: 409,
  invalid_transition: 409,
  approval_expired: 409,
  already_decided: 409,
  self_approval: 403,
  csrf_failed: 403,
  unavailable: 503,
  store_unavailable: 503,
  overloaded: 503,
};

/** Codes the wire spells differently from the domain: the contract names both mismatches `fingerprint_mismatch`. */
const WIRE_CODE: Partial<Record<ErrorCode, string>> = { decision_fingerprint_mismatch: 'fingerprint_mismatch' };

/** The status and the code a client sees for a domain error. */
export function httpErrorOf(error: DomainError): { status: number; code: string } {
  return { status: ERROR_STATUS[error.code], code: WIRE_CODE[error.code] ?? error.code };
}

/** Seconds a client is asked to wait (`Retry-After`) when the service cannot serve it right now. */
export const RETRY_AFTER_SECONDS = 1;

/** What a client sees for an error the domain did not mean to report (a bug, an outage it could not name). */
export const INTERNAL_ERROR = { status: 500, code: 'internal', message: 'internal error; the request may be retried with the same idempotency key' } as const;
