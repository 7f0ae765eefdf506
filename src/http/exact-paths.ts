import type Router from '@koa/router';
import type { RouterContext, RouterMiddleware } from '@koa/router';
import type { Context, Next } from 'koa';

/**
 * The router's dispatch, with its routes that have no parameters looked up by exact method and
 * path first, after `check` (the query parameters the route takes: declared-queries.ts).
 *
 * For every request @koa/router tests each route's pattern and composes a new chain for the
 * route it matched: ~3.5 µs in a loop, and ~15–20 µs of server CPU per request over HTTP, where
 * each microsecond of JavaScript also costs the kernel's loopback work (BENCHMARKS.md, twelfth and
 * fourteenth sessions). The busiest routes, the claim and the fingerprint, have no parameters.
 *
 * The router stays the one table of routes; this only indexes it. A route is indexed only where
 * it alone answers its method and path, so an earlier route that would also match (a `/:id`
 * declared before a `/latest`) still answers first, as in the router. Every route with parameters
 * goes through the router, unchanged. The index compares exact strings, which is how the
 * service's routers match (route-module.ts: case-sensitive and strict), so a path the index
 * passes over for its spelling (a trailing slash, other letter case) is unknown to the router too.
 */
export function exactPathsFirst(router: Router, check: (ctx: Context) => void): RouterMiddleware {
  const exact = new Map<string, { path: string; handler: RouterMiddleware }>();
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string' || layer.paramNames.length > 0 || layer.stack.length !== 1) continue;
    for (const method of layer.methods) {
      if (router.match(layer.path, method).pathAndMethod.length !== 1) continue;
      exact.set(`${method} ${layer.path}`, { path: layer.path, handler: layer.stack[0]! });
    }
  }
  const dispatch = router.routes();
  return (ctx: RouterContext, next: Next) => {
    check(ctx);
    const route = exact.get(`${ctx.method} ${ctx.path}`);
    if (!route) return dispatch(ctx, next);
    // What the router sets that this service reads: the route's template labels its metrics.
    ctx._matchedRoute = route.path;
    ctx.params = {};
    return route.handler(ctx, next);
  };
}
