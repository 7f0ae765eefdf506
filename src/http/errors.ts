/** Every error code the API can answer with, and its HTTP status: one table, one place. */
export const ERROR_STATUS = {
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
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
  scope_busy: 409,
  lease_lost: 409,
  invalid_transition: 409,
  approval_expired: 409,
  already_decided: 409,
  self_approval: 403,
  csrf_failed: 403,
  account_shredded: 409,
  conflict: 409,
  unavailable: 503,
  store_unavailable: 503,
  overloaded: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A domain error: the code decides the status; `extra` adds contract fields next to code and message. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extra = extra;
  }
}

export function appError(code: ErrorCode, message: string, extra?: Record<string, unknown>): AppError {
  return new AppError(code, message, extra);
}
