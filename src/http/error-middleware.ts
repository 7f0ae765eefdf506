import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../store/store.js';
import { AppError } from './errors.js';

/** Seconds a client should wait before retrying when the service cannot serve it right now. */
const RETRY_AFTER_SECONDS = 1;

/** First in the chain: maps AppErrors to the contract's JSON; anything else is a 500 that reveals nothing. */
export function errorMiddleware(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('not_found', `no route ${ctx.method} ${ctx.path}`);
      }
      if (ctx.status === 405 && (ctx.body === undefined || typeof ctx.body === 'string')) {
        throw new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
      }
    } catch (error) {
      const appError = error instanceof AppError ? error : error instanceof StoreUnavailableError ? storeUnavailable(error) : fromKoaError(error);
      if (!appError) {
        logger.error({ err: error, method: ctx.method, path: ctx.path }, 'unexpected error');
      }
      const final = appError ?? new AppError('internal', 'internal error; the request may be retried with the same idempotency key');
      ctx.status = final.status;
      if (final.status === 503) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
      ctx.type = 'application/json';
      ctx.body = { error: { code: final.code, message: final.message, ...final.extra } };
    }
  };
}

function storeUnavailable(error: StoreUnavailableError): AppError {
  return new AppError('store_unavailable', error.message, {}, { cause: error });
}

/** Koa and its routers throw http-errors with a status; keep their 4xx meaning. */
function fromKoaError(error: unknown): AppError | null {
  const status = (error as { status?: number; expose?: boolean } | null)?.status;
  if (status === 405 || status === 501) return new AppError('method_not_allowed', 'this method is not allowed on this route');
  if (status === 404) return new AppError('not_found', 'not found');
  if (status === 413) return new AppError('payload_too_large', 'the request body is too large');
  if (status === 400) return new AppError('invalid_request', 'the request is malformed');
  return null;
}
