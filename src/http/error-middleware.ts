import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../store/store.js';
import { isStoreOutage } from '../store/outage.js';
import { WorkAbandonedError, type WorkScope } from '../store/work-scope.js';
import { RateLimitedLog } from '../core/rate-limited-log.js';
import { DomainError, InvariantError } from '../core/errors.js';
import { httpErrorOf, INTERNAL_ERROR, RETRY_AFTER_SECONDS } from './error-status.js';
import type { Metrics } from '../metrics/metrics.js';
import { setErrorBody } from './body.js';

/**
 * First in the chain: every answer is `Cache-Control: no-store`; a DomainError becomes the
 * contract's JSON with the status its code maps to.
 * Anything else — a broken invariant, a bug — is logged once with its cause and answered
 * 500 `internal` with nothing of the message, stack or SQL. Then, with the status that answer
 * chose, the request's latency is recorded by route template (so ids never become labels; route-label.ts).
 *
 * These share this one layer because each Koa middleware layer costs ~3 µs of a replay's
 * ~150 µs of CPU, with or without work of its own (BENCHMARKS.md, ninth session).
 */
export function errorMiddleware(logger: Logger, metrics: Metrics, routeOf: (ctx: Context) => string | null): Middleware {
  // Outage answers are logged one line per code per few seconds with a count, never a stack per request.
  const outages = new RateLimitedLog((code, count, message) => logger.warn({ code, count }, `answering 503 ${code}: ${message}`));
  return async (ctx, next) => {
    const began = performance.now();
    // Answers carry secrets (a new API key, lease tokens): no cache keeps any of them. One rule for
    // every answer, set before the route runs so a route with a reason (the stylesheet) can say otherwise.
    ctx.res.setHeader('cache-control', 'no-store');
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new DomainError('not_found', `no route ${ctx.method} ${ctx.path}`);
      }
      // @koa/router answers OPTIONS on a known path itself, 200 with an Allow header and no body;
      // the service serves no OPTIONS, so it is a method the path lacks like any other (Allow kept).
      const optionsByRouter = ctx.method === 'OPTIONS' && ctx.status === 200 && !ctx.body && ctx.response.get('Allow') !== '';
      if ((ctx.status === 405 && (ctx.body === undefined || typeof ctx.body === 'string')) || optionsByRouter) {
        throw new DomainError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
      }
    } catch (error) {
      answerError(ctx, error, logger, outages);
    } finally {
      metrics.requestLatency.observe(ctx.method, routeOf(ctx) ?? 'unmatched', ctx.status, (performance.now() - began) / 1000);
    }
  };
}

function answerError(ctx: Context, error: unknown, logger: Logger, outages: RateLimitedLog): void {
  if (clientGone(ctx, error)) {
    // Nobody is left to answer, and nothing is wrong with the service: no stack, no error line.
    logger.debug({ method: ctx.method, path: ctx.path }, 'client went away before the answer');
    ctx.status = 499;
    return;
  }
  const known = asDomainError(error);
  if (!known) {
    const kind = error instanceof InvariantError ? 'invariant broken' : 'unexpected error';
    logger.error({ err: error, method: ctx.method, path: ctx.path }, kind);
    writeError(ctx, INTERNAL_ERROR.status, INTERNAL_ERROR.code, INTERNAL_ERROR.message, {});
    return;
  }
  const { status, code } = httpErrorOf(known);
  if (status === 503) outages.note(code, known.message);
  writeError(ctx, status, code, known.message, known.details);
}

function writeError(ctx: Context, status: number, code: string, message: string, details: Readonly<Record<string, unknown>>): void {
  ctx.status = status;
  if (status === 503) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
  ctx.type = 'application/json';
  setErrorBody(ctx, { error: { code, message, ...details } });
}

/** The domain's own errors, the store's outage, and Koa's http-errors keep their meaning; nothing else does. */
export function asDomainError(error: unknown): DomainError | null {
  if (error instanceof DomainError) return error;
  if (error instanceof StoreUnavailableError) return new DomainError('store_unavailable', error.message, {}, { cause: error });
  if (error instanceof WorkAbandonedError) return new DomainError('overloaded', error.message, {}, { cause: error });
  if (isStoreOutage(error)) return new DomainError('store_unavailable', new StoreUnavailableError(error).message, {}, { cause: error });
  return fromKoaError(error);
}

/** Koa and its routers throw http-errors with a status; keep their 4xx meaning. */
function fromKoaError(error: unknown): DomainError | null {
  const status = (error as { status?: number; expose?: boolean } | null)?.status;
  if (status === 405 || status === 501) return new DomainError('method_not_allowed', 'this method is not allowed on this route');
  if (status === 404) return new DomainError('not_found', 'not found');
  if (status === 413) return new DomainError('payload_too_large', 'the request body is too large');
  if (status === 400) return new DomainError('invalid_request', 'the request is malformed');
  return null;
}

/**
 * The client closed its connection: the request was abandoned (its work not run or rolled back),
 * or reading its body failed because the socket went away.
 */
function clientGone(ctx: Context, error: unknown): boolean {
  if (error instanceof WorkAbandonedError) return error.reason === 'client_gone';
  const code = (error as { code?: unknown } | null)?.code;
  const aborted = code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (error as Error | null)?.message === 'aborted';
  return aborted && (ctx.req.destroyed || ctx.req.socket.destroyed || (ctx.state.workScope as WorkScope | undefined)?.abandoned === 'client_gone');
}
