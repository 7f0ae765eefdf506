// The proxy's own answers: the contract's error body, and the codes only the proxy gives.
import type { ServerResponse } from 'node:http';

/**
 * Codes the proxy answers itself (docs/proxy.md lists them with their meaning). Gatehouse's own
 * 4xx errors (invalid_json, fingerprint_mismatch, scope_busy, …) pass through unchanged.
 */
export type ProxyErrorCode =
  | 'idempotency_key_required'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'invalid_json'
  | 'duplicate_member'
  | 'unsafe_number'
  | 'invalid_route'
  | 'upstream_unavailable'
  | 'upstream_unknown'
  | 'gatehouse_unavailable'
  | 'grant_invalid'
  | 'internal';

export const PROXY_ERROR_STATUS: Record<ProxyErrorCode, number> = {
  idempotency_key_required: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  invalid_json: 400,
  duplicate_member: 400,
  unsafe_number: 400,
  invalid_route: 400,
  upstream_unavailable: 502,
  upstream_unknown: 502,
  gatehouse_unavailable: 503,
  grant_invalid: 502,
  internal: 500,
};

interface ErrorOptions {
  status?: number;
  headers?: Record<string, string>;
  extra?: Record<string, unknown>;
}

export class ProxyError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(readonly code: ProxyErrorCode | PassedOnCode, message: string, options: ErrorOptions = {}) {
    super(message);
    this.status = options.status ?? PROXY_ERROR_STATUS[code as ProxyErrorCode] ?? 500;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }

  /** One of Gatehouse's own errors about the caller's request, passed on with its status. */
  static passedOn(code: string, message: string, status: number, extra: Record<string, unknown>): ProxyError {
    return new ProxyError(code as PassedOnCode, message, { status, extra });
  }
}

/** A Gatehouse error code passed on unchanged (documented with the HTTP API, not here). */
type PassedOnCode = string & { readonly passedOn: unique symbol };

/** A JSON answer. Nothing is sent twice: a response already under way (or a client gone) is left alone. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

export function sendError(res: ServerResponse, error: ProxyError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, { error: { code: error.code, message: error.message, ...error.extra } }, { ...headers, ...error.headers });
}
