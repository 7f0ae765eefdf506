/**
 * The errors the domain reports to its callers. A code says what went wrong in words a client can
 * act on; how it travels (an HTTP status, an exit code) is the edge's business, not the domain's.
 */
export const ERROR_CODES = [
  'unauthenticated',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'payload_too_large',
  'headers_too_large',
  'unsupported_media_type',
  'invalid_json',
  'duplicate_member',
  'unsafe_number',
  'invalid_request',
  'invalid_route',
  'command_invalid',
  'idempotency_key_missing',
  'idempotency_key_invalid',
  'fingerprint_mismatch',
  // An approval decision named a fingerprint that is no longer the operation's: the approval moved
  // under the approver. Not the claim's mismatch (a reused key with another payload).
  'decision_fingerprint_mismatch',
  'scope_busy',
  'lease_lost',
  'invalid_transition',
  'approval_expired',
  'already_decided',
  'self_approval',
  'csrf_failed',
  'unavailable',
  'store_unavailable',
  'overloaded',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** A refusal the caller can understand: the code, a message for people, and contract fields in `details`. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }
}

/**
 * Something the code believed impossible happened (a broken invariant): a bug or a corrupted store.
 * Its message is for the operator's log only; a client learns nothing but that it may retry.
 */
export class InvariantError extends Error {
  override readonly name = 'InvariantError';
}
