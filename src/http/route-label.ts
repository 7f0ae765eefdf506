import type Router from '@koa/router';
import type { Context } from 'koa';

/**
 * The template of the route a request is for: the route that answered it; for a request refused
 * before a route ran (401 at authentication, 405 for another method, 503 at admission), the route
 * its path names whatever the method; null for a path no route has. Metrics label requests with
 * it (`unmatched` for null) and authentication answers 404 rather than 401 for null, so a path is
 * known or unknown alike everywhere. The router's search runs only for requests no route answered:
 * one a route answered has its template already (the router or the exact-path index set it).
 */
export function routeOfRequest(router: Router): (ctx: Context) => string | null {
  return (ctx) => {
    const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
    if (matched !== undefined) return String(matched);
    // Layers without methods are middleware (router.use), not routes.
    const route = router.match(ctx.path, ctx.method).path.find((layer) => layer.methods.length > 0);
    return route ? String(route.path) : null;
  };
}
