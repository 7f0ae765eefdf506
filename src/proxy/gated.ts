// One gated request, start to end (docs/proxy.md): claim with the caller's key, forward once
// under the lease, report what happened, answer with the upstream's answer or the claim's outcome.
// The retry contract itself (claims, grants, heartbeats, reports, never guessing) is the client
// library's Executor; this module supplies the upstream write and maps results to HTTP.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  GatehouseError,
  GatehouseTransportError,
  GrantVerificationError,
  type ExecuteResult,
  type Executor,
  type StoredResponse,
  type WriteFn,
} from '../client/index.js';
import { type RecordedRoute, claimTarget } from './command.js';
import { ProxyError, sendError } from './errors.js';
import { first } from './headers.js';
import { mapResult, sendUpstream } from './answer.js';
import { relayOversize } from './relay.js';
import { BODY_OMITTED, toStored, withoutBody } from './stored-response.js';
import { UpstreamUnavailable, UpstreamUnknown, isOversize, type OversizeResponse, type Upstream } from './upstream.js';

export interface GatedDeps {
  executor: Executor;
  upstream: Upstream;
  leaseSeconds: number;
  maxBodyBytes: number;
  log: (message: string, fields?: Record<string, unknown>) => void;
}

/** `recorded`: the route the router found for the request's path (recordedRoute), so it is not worked out twice. */
export async function handleGated(deps: GatedDeps, req: IncomingMessage, res: ServerResponse, body: Buffer, recorded: RecordedRoute | null): Promise<void> {
  const key = first(req.headers, 'idempotency-key');
  if (key === undefined) {
    throw new ProxyError('idempotency_key_required', 'this request changes data: send an Idempotency-Key header (the same one on every retry of it)');
  }
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const rawQuery = queryAt === -1 ? '' : url.slice(queryAt + 1);
  const method = (req.method ?? 'POST').toUpperCase();
  const target = claimTarget(path, rawQuery, body, first(req.headers, 'content-type'), recorded);
  const agentRunId = first(req.headers, 'agent-run-id');

  // A client that left before its work started does not get it run (docs/http-api.md).
  if (req.destroyed && !req.complete) return;

  let upstreamAnswer: AnswerToCaller | undefined;
  // The claim that leased this write, for an answer that ends before any upstream answer.
  let claimed: Claimed | undefined;
  const write: WriteFn = async (ctx) => {
    claimed = { operationId: ctx.operation.id, outcome: ctx.grant ? 'approved' : 'created' };
    const call = await deps.upstream.open(method, url, deps.upstream.headersFor(req), body.length);
    try {
      await ctx.sent();
    } catch (error) {
      call.abandon(); // nothing was written: the Executor reports canceled
      throw error;
    }
    const answer = await call.send(body);
    // A 5xx may come after the API wrote: not a known failure, never stored as one.
    if (answer.status >= 500) {
      if (isOversize(answer)) answer.discard();
      throw new UpstreamUnknown(`the upstream answered ${answer.status}`, 'server_error', answer.status);
    }
    if (isOversize(answer)) {
      const relayed = await answerOverLimit(deps, res, answer, claimed);
      upstreamAnswer = relayed.answer;
      return { ok: answer.status < 400, response: relayed.stored };
    }
    upstreamAnswer = { bodyBytes: answer.body.length, send: (result) => sendUpstream(res, answer, result) };
    return { ok: answer.status < 400, response: toStored(answer) };
  };

  let result: ExecuteResult;
  try {
    result = await deps.executor.executeWithKey(key, {
      method, route: target.route, command: target.command, lease_seconds: deps.leaseSeconds,
      ...(agentRunId === undefined ? {} : { agent_run_id: agentRunId }),
    }, write, {
      sentMode: 'by_write', inProgressWaitMs: 0, approvalWaitMs: 0,
      onResponseTooLarge: (stored, refusal) => storedWithoutBody(deps, stored, refusal, claimed, upstreamAnswer),
    });
  } catch (error) {
    if (claimed === undefined && error instanceof GatehouseError && error.status === 413) throw claimTooLarge(deps, body.length, error);
    throw translate(error, claimed);
  }
  if (result.kind === 'created' && upstreamAnswer) return upstreamAnswer.send(result);
  if (result.kind === 'unknown' && result.cause !== undefined) return answerUnknownWrite(deps, res, result, upstreamAnswer);
  mapResult(deps.executor.client, res, result);
}

/** The upstream's answer to this write, given to the caller once its outcome was reported (or could not be). */
interface AnswerToCaller {
  bodyBytes: number;
  send(result: ExecuteResult): void;
}

/**
 * An answer over `--max-response` (docs/proxy.md): too large to store, but the write's outcome
 * is known, so it is stored as one Gatehouse cannot hold is, status and headers without the body,
 * marked so. The caller gets it streamed through, marked the same, as it arrives; its end waits
 * for the report. Resolves once the upstream's answer ended whole; one that broke off throws.
 */
async function answerOverLimit(deps: GatedDeps, res: ServerResponse, answer: OversizeResponse, claimed: Claimed): Promise<{ stored: StoredResponse; answer: AnswerToCaller }> {
  const stored = withoutBody(toStored({ status: answer.status, headers: answer.headers, body: Buffer.alloc(0) }));
  const relayed = await relayOversize(res, answer, { [BODY_OMITTED]: stored.headers![BODY_OMITTED]!, ...aboutOperation(claimed).headers });
  deps.log('the upstream answer is over --max-response: the caller got it streamed through, and its status and headers are stored '
    + 'without the body, and replays say so (gatehouse-body-omitted); to keep such bodies, raise gatehouse proxy --max-response', {
    operation_id: claimed.operationId, status: answer.status, body_bytes: relayed.bytes,
  });
  return { stored, answer: { bodyBytes: relayed.bytes, send: () => relayed.end() } };
}

/**
 * The write left for the upstream and the proxy cannot say how it ended in the ledger. With an
 * upstream answer but no `completed` on record (Gatehouse went away in between), the caller still
 * gets the upstream's answer: it is the truth about this write. Without one, nothing is guessed.
 */
function answerUnknownWrite(deps: GatedDeps, res: ServerResponse, result: Extract<ExecuteResult, { kind: 'unknown' }>, upstreamAnswer: AnswerToCaller | undefined): void {
  const cause = result.cause;
  const headers = { 'gatehouse-outcome': 'unknown', ...(result.operation ? { 'gatehouse-operation': result.operation.id } : {}) };
  if (!(cause instanceof UpstreamUnknown) && upstreamAnswer) {
    deps.log('the upstream answered but Gatehouse did not record it; the operation will become unknown', { operation_id: result.operation?.id });
    return upstreamAnswer.send(result);
  }
  const reason = cause instanceof UpstreamUnknown ? cause.reason : 'reset';
  const upstreamStatus = cause instanceof UpstreamUnknown ? cause.upstreamStatus : undefined;
  const messages: Record<typeof reason, string> = {
    reset: 'the upstream connection failed after the request was sent: the write may or may not have happened',
    timeout: 'the upstream did not answer in time: the write may or may not have happened',
    server_error: `the upstream answered ${upstreamStatus ?? 'a server error'}: the write may or may not have happened`,
    not_final: `the upstream answered ${upstreamStatus ?? '1xx'}, which is not a final answer: the write may or may not have happened`,
  };
  sendError(res, new ProxyError('upstream_unknown', `${messages[reason]}; a retry with this key will not send it again (the operation becomes unknown for a reconciler)`, {
    status: reason === 'timeout' ? 504 : 502,
    extra: {
      operation_id: result.operation?.id ?? null,
      ...(upstreamStatus === undefined ? {} : { upstream_status: upstreamStatus }),
    },
  }), headers);
}

/**
 * Gatehouse refused the `completed` report as too large: the answer was within `--max-response`, but
 * its stored form (base64 for bytes, a third larger) in the report did not pass the service's
 * `--max-body`. The write's outcome is known, so it is stored all the same, without the body.
 */
function storedWithoutBody(deps: GatedDeps, stored: StoredResponse, refusal: GatehouseError, claimed: Claimed | undefined, answer: AnswerToCaller | undefined): StoredResponse {
  deps.log('the upstream answer is too large to store in Gatehouse: its status and headers are stored without the body, and replays say so '
    + '(gatehouse-body-omitted); to keep such bodies, give gatehouse serve --max-body room for the answer as stored (stored_body_bytes)', {
    operation_id: claimed?.operationId, status: stored.status, body_bytes: answer?.bodyBytes,
    stored_body_bytes: Buffer.byteLength(JSON.stringify(stored.body ?? null)), gatehouse: refusal.message,
  });
  return withoutBody(stored);
}

/**
 * Gatehouse refused the claim as too large: the body passed the proxy's `--max-body` but the
 * claim around it did not pass the service's. Its own 413 would name only its limit, as if the
 * caller had passed that one; this names both, and what the operator changes. Nothing was claimed.
 */
function claimTooLarge(deps: GatedDeps, bodyBytes: number, error: GatehouseError): ProxyError {
  deps.log('Gatehouse refused a claim as too large: give gatehouse serve --max-body 64kb more than gatehouse proxy --max-body', {
    body_bytes: bodyBytes, proxy_max_body: deps.maxBodyBytes,
  });
  return new ProxyError('payload_too_large', `the request body (${bodyBytes} bytes) is within this proxy's --max-body (${deps.maxBodyBytes} bytes), `
    + `but Gatehouse refused the claim that carries it (${JSON.stringify(error.message)}): send a smaller body, or have the operator give `
    + '`gatehouse serve --max-body` room for the claim around the body (64kb more than `gatehouse proxy --max-body`) '
    + 'or lower `gatehouse proxy --max-body`; nothing was claimed and the key is unused');
}

/** The operation a claim leased to this request, and the claim's outcome. */
interface Claimed {
  operationId: string;
  outcome: 'created' | 'approved';
}

/** An answer about a claimed operation names it, in the body and the headers (docs/proxy.md). */
function aboutOperation(claimed: Claimed): { headers: Record<string, string>; extra: Record<string, unknown> } {
  return {
    headers: { 'gatehouse-outcome': claimed.outcome, 'gatehouse-operation': claimed.operationId },
    extra: { operation_id: claimed.operationId },
  };
}

/** Failures before any write: what the caller should do next is in the code. */
function translate(error: unknown, claimed: Claimed | undefined): unknown {
  if (error instanceof ProxyError) return error;
  if (error instanceof UpstreamUnavailable) {
    const about = claimed ? aboutOperation(claimed) : { headers: {}, extra: {} };
    return new ProxyError('upstream_unavailable', `${error.message}; nothing was sent, the operation is canceled and a retry with the same key may run it`, {
      headers: { ...about.headers, 'retry-after': '1' }, extra: about.extra,
    });
  }
  if (error instanceof GrantVerificationError) {
    const about = error.operationId === undefined ? { headers: {}, extra: {} } : aboutOperation({ operationId: error.operationId, outcome: 'approved' });
    return new ProxyError('grant_invalid', `the approval's grant does not check out against the pinned keys: ${error.message}; nothing was sent`, about);
  }
  if (error instanceof GatehouseTransportError) {
    return new ProxyError('gatehouse_unavailable', `Gatehouse could not be reached (${error.message}); nothing was sent upstream`, { headers: { 'retry-after': '1' } });
  }
  if (error instanceof GatehouseError) {
    if (error.status >= 500) {
      return new ProxyError('gatehouse_unavailable', `Gatehouse answered ${error.status} ${error.code}; nothing was sent upstream`, { headers: { 'retry-after': '1' } });
    }
    if (error.status === 401 || error.status === 403) {
      // The proxy's own key was refused: a deployment problem, not the caller's.
      return new ProxyError('gatehouse_unavailable', `Gatehouse refused the proxy's API key (${error.code}); nothing was sent upstream`);
    }
    // The caller's mistakes Gatehouse found (invalid key format, a policy schema, …): passed on as they are.
    return ProxyError.passedOn(error.code, error.message, error.status, error.extra);
  }
  return error;
}
