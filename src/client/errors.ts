import type { JsonValue } from '../core/json.js';

/**
 * An error answer from Gatehouse: `{"error": {"code", "message", ...extra}}`.
 * `code` is the contract's snake_case code, `status` the HTTP status, `extra` the other members
 * (e.g. `operation_id` and `state` of a `fingerprint_mismatch`).
 *
 * Outcome bodies (`in_progress`, `unknown`, `denied`, `replayed`, ...) are never GatehouseErrors:
 * the client returns them as values.
 */
export class GatehouseError extends Error {
  readonly code: string;
  readonly status: number;
  readonly extra: Record<string, JsonValue>;

  constructor(code: string, message: string, status: number, extra: Record<string, JsonValue> = {}) {
    super(message);
    this.name = 'GatehouseError';
    this.code = code;
    this.status = status;
    this.extra = extra;
  }
}

/**
 * The request never got an answer: connection refused or reset, DNS failure, or the per-request
 * timeout ran out. The server may or may not have acted on it; callers ask for the status by key.
 */
export class GatehouseTransportError extends Error {
  readonly kind: 'timeout' | 'network';
  constructor(kind: 'timeout' | 'network', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GatehouseTransportError';
    this.kind = kind;
  }
}

/**
 * The grant attached to an approved operation does not check out: the write must not run.
 * `operationId` names the operation when the check was made on a claim's answer (the Executor
 * then reports it canceled), so a caller can say which one.
 */
export class GrantVerificationError extends Error {
  readonly operationId: string | undefined;
  constructor(message: string, options?: { operationId?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GrantVerificationError';
    this.operationId = options?.operationId;
  }
}

export function isTransportError(err: unknown): err is GatehouseTransportError {
  return err instanceof GatehouseTransportError;
}
