import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { BodyValidator } from './validate.js';
import type { QueryDeclaration } from './declared-queries.js';
import { DomainError } from '../core/errors.js';
import { hasNul } from '../core/stored-text.js';

/**
 * One domain's routes; `publicPaths` (exact paths of its routes) are answered without an API key. `bodies` names the
 * validator of each route that takes a JSON body (`"POST /v1/operations"` → validateClaim), so
 * test/http/openapi.test.ts can hold the router, schema/requests and the OpenAPI document together.
 * `queries` names the query parameters of each /v1/ route that takes some (`"GET /v1/approvals"` →
 * its names); a /v1/ route not named takes none, and a parameter a route does not take is refused
 * before it runs (declared-queries.ts). `fallback` runs when no route of any module matched (the
 * pages answer their own unknown paths as a page).
 */
export interface RouteModule {
  router: Router;
  publicPaths?: string[];
  bodies?: Readonly<Record<string, BodyValidator<unknown>>>;
  queries?: Readonly<Record<string, QueryDeclaration>>;
  fallback?: Middleware;
}

/**
 * Every router of the service: a path is matched as the contract spells it, case-sensitively and
 * without a trailing slash (`/V1/keys` and `/v1/healthz/` are unknown paths, 404). The exact-path
 * index (exact-paths.ts) and the routes that need no key (auth.ts) compare strings, so a looser
 * router would serve paths they do not recognise.
 */
export function newRouter(options: { prefix?: string } = {}): Router {
  const router = new Router({ ...options, sensitive: true, strict: true });
  // No id holds U+0000 (core/stored-text.ts): such a path names nothing, and is not looked up.
  router.param('id', (id, ctx, next) => {
    if (hasNul(id)) throw new DomainError('not_found', `no resource has the id ${JSON.stringify(id)}`);
    return next();
  });
  return router;
}
