import Koa from 'koa';
import type { AppContext } from '../context.js';
import { errorMiddleware } from './error-middleware.js';
import { authMiddleware } from './auth.js';
import { admissionMiddleware } from './admission.js';
import { DEFAULT_LIMITS } from './limits.js';
import { exactPathsFirst } from './exact-paths.js';
import { routeOfRequest } from './route-label.js';
import { newRouter, type RouteModule } from './route-module.js';
import { undeclaredQueryCheck } from './declared-queries.js';

export interface HttpOptions {
  maxBodyBytes: number;
  /**
   * Reverse proxies in front of the service that append the client's address to
   * X-Forwarded-For; 0 trusts no header. The client is the address the outermost of
   * them saw: entries further left were written by the client and prove nothing.
   */
  trustedProxies?: number;
  /** No request is worked on past this; it is answered 503 then (src/http/deadline.ts, through admission.ts). */
  requestDeadlineMs?: number;
  /** Requests worked on at once, over all clients and per client (src/http/load-shedding.ts). */
  maxInFlight?: number;
  maxInFlightPerClient?: number;
  /** Open connections (src/http/connection-limit.ts). */
  maxConnections?: number;
}

/**
 * The Koa app: errors and timing, admission (load shedding, the body limit, the deadline),
 * authentication, the refusal of query parameters a route does not take, then one router for
 * every module's routes (exact paths looked up first).
 */
export function createApp(context: AppContext, modules: RouteModule[], options: HttpOptions): Koa {
  const app = new Koa();
  const trustedProxies = options.trustedProxies ?? 0;
  // ctx.ip is what the sign-in throttle counts: behind a proxy the socket's address is the proxy's.
  app.proxy = trustedProxies > 0;
  app.maxIpsCount = trustedProxies;
  // One router holding every module's routes: a request is matched once, not once per module
  // (each module's router matched the path, read the Host header and added two middleware layers
  // to every request: ~5 µs of a replay's ~165). A path with no route for the method is answered
  // 405 with every method any module serves on it.
  const routes = newRouter();
  for (const module of modules) routes.use(module.router.routes());
  const routeOf = routeOfRequest(routes);
  app.use(errorMiddleware(context.logger, context.metrics, routeOf));
  // Admission first: an overloaded service answers before it reads a byte of the body or looks up a key.
  const maxInFlight = options.maxInFlight ?? DEFAULT_LIMITS.maxInFlight;
  app.use(admissionMiddleware({
    maxInFlight,
    maxInFlightPerClient: options.maxInFlightPerClient ?? Math.max(1, Math.ceil(maxInFlight / 2)),
    deadlineMs: options.requestDeadlineMs ?? DEFAULT_LIMITS.requestDeadlineMs,
    maxBodyBytes: options.maxBodyBytes,
  }));
  app.use(authMiddleware(context.principals, modules.flatMap((m) => m.publicPaths ?? []), routeOf));
  app.use(exactPathsFirst(routes, undeclaredQueryCheck(routes, new Map(modules.flatMap((m) => Object.entries(m.queries ?? {}))))));
  app.use(routes.allowedMethods());
  for (const module of modules) if (module.fallback) app.use(module.fallback);
  return app;
}
