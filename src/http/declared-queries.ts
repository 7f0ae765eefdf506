import type Router from '@koa/router';
import type { Context } from 'koa';
import { onlyParams } from '../operations/query-params.js';

/**
 * A route that reads no query and may be sent any: `GET /v1/healthz`, whose pollers (load
 * balancers, uptime checkers) may add a cache-buster, and whose answer no parameter could change.
 */
export const ANY_QUERY = Symbol('any query');

/** The query parameters a route takes, by name; or ANY_QUERY. */
export type QueryDeclaration = readonly string[] | typeof ANY_QUERY;

const NONE: readonly string[] = [];

/**
 * Refuses, for every JSON route (everything under /v1/), a query parameter the route does not
 * take (docs/http-api.md, Conventions): a misspelt filter or page parameter silently ignored
 * answers another question as if it were the one asked. Each route module declares the query
 * parameters of its routes that take some (RouteModule.queries, `"GET /v1/approvals"` → names);
 * every other route takes none. The routes then read only what they declared, and none of them
 * checks for strays itself.
 *
 * A request whose path or method no route has is passed on untouched, to be answered 404 or 405
 * as without a query. The pages under /ui/ (their forms, `?format=json`) and /metrics are not the
 * JSON API and read their queries themselves.
 *
 * A check the router's dispatch makes (exact-paths.ts), not a Koa layer of its own: each layer
 * costs every request a few microseconds (BENCHMARKS.md), and this one would have for nothing.
 */
export function undeclaredQueryCheck(router: Router, declarations: ReadonlyMap<string, QueryDeclaration>): (ctx: Context) => void {
  return (ctx) => {
    // Nearly every request, every claim among them, has no query: this comparison is all it pays.
    if (ctx.querystring === '' || !ctx.path.startsWith('/v1/')) return;
    // HEAD is answered by the GET route of the path (the router's own rule).
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    const route = router.match(ctx.path, method).pathAndMethod.find((layer) => layer.methods.length > 0);
    if (!route) return;
    const declared = declarations.get(`${method} ${String(route.path)}`) ?? NONE;
    if (declared !== ANY_QUERY) onlyParams(ctx.query, declared);
  };
}
