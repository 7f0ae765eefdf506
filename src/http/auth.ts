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

/**
 * Every /v1 route and /metrics need a Bearer key except the public ones; the UI authenticates
 * with its own session. `publicPaths` are exact paths, compared as the router compares them
 * (route-module.ts: case-sensitive, no trailing slash), so a path is public exactly when the
 * router would answer it with a public route.
 */
export function authMiddleware(principals: Principals, publicPaths: readonly string[], routeOf: (ctx: Context) => string | null): Middleware {
  const open = new Set(publicPaths);
  return async (ctx, next) => {
    const needsKey = ctx.path.startsWith('/v1/') || ctx.path === '/metrics';
    if (!needsKey || open.has(ctx.path)) return next();
    const match = BEARER.exec(ctx.get('authorization'));
    if (!match) throw refused(ctx, routeOf, CHALLENGE, 'send Authorization: Bearer <api key>');
    const principal = await principals.authenticate(match[1]!);
    if (!principal) throw refused(ctx, routeOf, CHALLENGE_INVALID_TOKEN, 'the API key is unknown or revoked');
    ctx.state.principal = principal;
    return next();
  };
}

export function principalOf(ctx: Context): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw unauthenticated(ctx, CHALLENGE, 'send Authorization: Bearer <api key>');
  return principal;
}

/**
 * A path no route has is unknown to anyone, with a key or without (the routes are no secret:
 * GET /v1/openapi.json lists them): 404, as the router answers it. Otherwise 401.
 */
function refused(ctx: Context, routeOf: (ctx: Context) => string | null, challenge: string, message: string): DomainError {
  if (routeOf(ctx) === null) return new DomainError('not_found', `no route ${ctx.method} ${ctx.path}`);
  return unauthenticated(ctx, challenge, message);
}

function unauthenticated(ctx: Context, challenge: string, message: string): DomainError {
  ctx.set('WWW-Authenticate', challenge);
  return new DomainError('unauthenticated', message);
}
