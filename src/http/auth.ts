import type { Context, Middleware } from 'koa';
import type { Principals } from '../principals/principals.js';
import type { Principal } from '../principals/roles.js';
import { DomainError } from '../core/errors.js';

/** Every /v1 route and /metrics need a Bearer key except the public ones; the UI authenticates with its own session. */
export function authMiddleware(principals: Principals, publicPaths: RegExp[]): Middleware {
  return async (ctx, next) => {
    const needsKey = ctx.path.startsWith('/v1/') || ctx.path === '/metrics';
    if (!needsKey || publicPaths.some((p) => p.test(ctx.path))) return next();
    const header = ctx.get('authorization');
    const match = /^Bearer ([^\s]+)$/i.exec(header);
    if (!match) throw new DomainError('unauthenticated', 'send Authorization: Bearer <api key>');
    const principal = await principals.authenticate(match[1]!);
    if (!principal) throw new DomainError('unauthenticated', 'the API key is unknown or revoked');
    ctx.state.principal = principal;
    return next();
  };
}

export function principalOf(ctx: Context): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw new DomainError('unauthenticated', 'send Authorization: Bearer <api key>');
  return principal;
}
