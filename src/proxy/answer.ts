// Claim results → HTTP answers to the caller (docs/proxy.md). Every gated answer names
// its operation and outcome in `Gatehouse-Operation` and `Gatehouse-Outcome` headers.
import type { ServerResponse } from 'node:http';
import type { ExecuteResult, GatehouseClient } from '../client/index.js';
import { contentLength, endToEnd, first } from './headers.js';
import { sendError, sendJson, ProxyError } from './errors.js';
import { reusedAnswer } from './reused.js';
import { BODY_OMITTED, fromStored } from './stored-response.js';
import type { UpstreamResponse } from './upstream.js';

/** The claim's outcome: a write run under a grant was claimed `approved` (the Executor's kind is `created`). */
export function outcomeOf(result: ExecuteResult): string {
  return result.kind === 'created' && result.grant ? 'approved' : result.kind;
}

function labels(result: ExecuteResult): Record<string, string> {
  const headers: Record<string, string> = { 'gatehouse-outcome': outcomeOf(result) };
  const operation = 'operation' in result ? result.operation : undefined;
  if (operation) headers['gatehouse-operation'] = operation.id;
  return headers;
}

/**
 * The upstream's own answer to the write this request made: status, end-to-end headers and body as
 * they came; when its body was not stored (too large), the marker replays carry says so at once.
 */
export function sendUpstream(res: ServerResponse, answer: UpstreamResponse, result: ExecuteResult): void {
  if (res.headersSent || res.destroyed) return;
  const headers = endToEnd(answer.headers, ['content-length']);
  const omitted = result.kind === 'created' ? result.response.headers?.[BODY_OMITTED] : undefined;
  if (typeof omitted === 'string') headers[BODY_OMITTED] = omitted;
  const length = contentLength(res.req.method, answer.status, answer.body.length, first(answer.headers, 'content-length'));
  res.writeHead(answer.status, { ...headers, ...labels(result), ...(length === undefined ? {} : { 'content-length': length }) });
  res.end(answer.body);
}

/** A finished operation's stored answer, or without one the outcome body (a canceled one: its retry takes a new lease). */
function sendReplay(res: ServerResponse, result: Extract<ExecuteResult, { kind: 'created' | 'replayed' | 'reused' }>, h: Record<string, string>): void {
  // A 1xx stored before Gatehouse refused one is no final answer (RFC 9110 §15.2): written as
  // one, it leaves the caller waiting for the answer for good. The operation, which carries it,
  // still says how the write ended.
  if (!result.response || result.response.status < 200) {
    // Finished without a stored answer (e.g. resolved by an admin without one), or canceled.
    const finished = result.operation.state === 'succeeded' || result.operation.state === 'failed';
    const status = finished ? 200 : 409;
    return sendJson(res, status, { outcome: result.kind === 'created' ? 'replayed' : result.kind, execute: false, operation: result.operation }, {
      ...h, ...(finished ? { 'idempotent-replayed': 'true' } : { 'retry-after': '1' }),
    });
  }
  if (res.headersSent || res.destroyed) return;
  const stored = fromStored(result.response);
  const headers = Object.assign(stored.headers, h);
  headers['idempotent-replayed'] = 'true';
  const length = contentLength(res.req.method, stored.status, Buffer.byteLength(stored.body));
  if (length !== undefined) headers['content-length'] = length;
  res.writeHead(stored.status, headers);
  res.end(stored.body);
}

export function mapResult(client: GatehouseClient, res: ServerResponse, result: ExecuteResult): void {
  const h = labels(result);
  switch (result.kind) {
    case 'reused': {
      const waiting = reusedAnswer(result.operation);
      if (waiting) {
        const body = { outcome: 'reused', execute: false, operation: result.operation, message: waiting.message };
        return sendJson(res, waiting.status, body, { ...h, ...(waiting.retryAfter ? { 'retry-after': waiting.retryAfter } : {}) });
      }
      return sendReplay(res, result, h);
    }
    case 'created':
    case 'replayed':
      return sendReplay(res, result, h);
    case 'in_progress':
      return sendJson(res, 409, { outcome: 'in_progress', execute: false, operation: result.operation }, {
        ...h, 'retry-after': String(result.retryAfterSeconds ?? 1),
      });
    case 'approval_required': {
      const url = client.approvalUrl(result.approvalId);
      return sendJson(res, 202, { outcome: 'approval_required', execute: false, operation: result.operation, approval: result.approval, approval_url: url }, {
        ...h, location: url,
      });
    }
    case 'denied':
      // Gatehouse's own outcome body: the approval says who denied it and why.
      return sendJson(res, 403, { outcome: 'denied', execute: false, operation: result.operation, ...(result.approval ? { approval: result.approval } : {}) }, h);
    case 'unknown':
      return sendJson(res, 409, { outcome: 'unknown', execute: false, operation: result.operation ?? null }, h);
    case 'conflict': {
      const status = result.code === 'fingerprint_mismatch' ? 422 : 409;
      const extra = result.code === 'fingerprint_mismatch'
        ? { operation_id: result.operationId ?? null, state: result.state ?? null }
        : { operation_id: result.operationId ?? null };
      // On fingerprint_mismatch the operation is the one this key names; on scope_busy it is another
      // key's (the scope's holder), named in the body only, so a caller never takes it for its own.
      const headers: Record<string, string> = { 'gatehouse-outcome': result.code };
      if (result.code === 'fingerprint_mismatch' && result.operationId !== undefined) headers['gatehouse-operation'] = result.operationId;
      return sendError(res, ProxyError.passedOn(result.code, result.message, status, extra), headers);
    }
    default: {
      const never: never = result;
      throw new Error(`unexpected result ${JSON.stringify(never)}`);
    }
  }
}
