import type { Context, Middleware } from 'koa';
import type { Principals } from '../principals/principals.js';
import type { Principal } from '../principals/roles.js';
import { DomainError } from '../core/errors.js';

/**
 * RFC 6750 §2.1: `Bearer 1*SP b64token`, the scheme name case-insensitive (RFC 9110 §11.1).
 * Untrusted input: the token is only ever looked up, by its hash.
 */
const BEARER = /^Bearer +(\S+)$/i;

/**
 * A 401 must name the scheme it wants (RFC 9110 §11.6.1); a key that was sent but is unknown
 * or revoked is `invalid_token` (RFC 6750 §3.1), a request without one gets no error code (§3).
 */
const CHALLENGE = 'Bearer';
const CHALLENGE_INVALID_TOKEN = 'Bearer error="invalid_token"';

/** Every /v1 route and /metrics need a Bearer key except the public ones; the UI authenticates with its own session. */
export function authMiddleware(principals: Principals, publicPaths: RegExp[]): Middleware {
  return async (ctx, next) => {
    const needsKey = ctx.path.startsWith('/v1/') || ctx.path === '/metrics';
    if (!needsKey || publicPaths.some((p) => p.test(ctx.path))) return next();
    const match = BEARER.exec(ctx.get('authorization'));
    if (!match) throw unauthenticated(ctx, CHALLENGE, 'send Authorization: Bearer <api key>');
    const principal = await principals.authenticate(match[1]!);
    if (!principal) throw unauthenticated(ctx, CHALLENGE_INVALID_TOKEN, 'the API key is unknown or revoked');
    ctx.state.principal = principal;
    return next();
  };
}

export function principalOf(ctx: Context): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw unauthenticated(ctx, CHALLENGE, 'send Authorization: Bearer <api key>');
  return principal;
}

function unauthenticated(ctx: Context, challenge: string, message: string): DomainError {
  ctx.set('WWW-Authenticate', challenge);
  return new DomainError('unauthenticated', message);
}
