import Router from '@koa/router';
import Koa from 'koa';
import type { AppContext } from '../context.js';
import { errorMiddleware } from './error-middleware.js';
import { authMiddleware } from './auth.js';
import { deadlineMiddleware } from './deadline.js';
import { loadSheddingMiddleware } from './load-shedding.js';
import { DEFAULT_LIMITS } from './limits.js';
import type { RouteModule } from './route-module.js';
import type { Metrics } from '../metrics/metrics.js';

/** Outermost, so it sees the status the error middleware chose. Routes by template, so ids never become labels. */
function requestTiming(metrics: Metrics): Koa.Middleware {
  return async (ctx, next) => {
    const began = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.requestSeconds.observe({ method: ctx.method, route, status: String(ctx.status) }, (performance.now() - began) / 1000);
    }
  };
}

export interface HttpOptions {
  maxBodyBytes: number;
  /**
   * Reverse proxies in front of the service that append the client's address to
   * X-Forwarded-For; 0 trusts no header. The client is the address the outermost of
   * them saw: entries further left were written by the client and prove nothing.
   */
  trustedProxies?: number;
  /** No request is worked on past this; it is answered 503 then (src/http/deadline.ts). */
  requestDeadlineMs?: number;
  /** Requests worked on at once, over all clients and per client (src/http/load-shedding.ts). */
  maxInFlight?: number;
  maxInFlightPerClient?: number;
  /** Open connections (src/http/connection-limit.ts). */
  maxConnections?: number;
}


/** The Koa app: errors first, then load shedding and the deadline, then authentication, then one router per domain. */
export function createApp(context: AppContext, modules: RouteModule[], options: HttpOptions): Koa {
  const app = new Koa();
  const trustedProxies = options.trustedProxies ?? 0;
  // ctx.ip is what the sign-in throttle counts: behind a proxy the socket's address is the proxy's.
  app.proxy = trustedProxies > 0;
  app.maxIpsCount = trustedProxies;
  app.use(requestTiming(context.metrics));
  app.use(errorMiddleware(context.logger));
  // Shedding first: an overloaded service answers before it reads a byte of the body or looks up a key.
  app.use(loadSheddingMiddleware({
    maxInFlight: options.maxInFlight ?? DEFAULT_LIMITS.maxInFlight,
    maxInFlightPerClient: options.maxInFlightPerClient ?? Math.max(1, Math.ceil((options.maxInFlight ?? DEFAULT_LIMITS.maxInFlight) / 2)),
  }));
  app.use(deadlineMiddleware(options.requestDeadlineMs ?? DEFAULT_LIMITS.requestDeadlineMs));
  app.use(async (ctx, next) => {
    ctx.state.maxBodyBytes = options.maxBodyBytes;
    await next();
  });
  app.use(authMiddleware(context.principals, modules.flatMap((m) => m.publicPaths ?? [])));
  // One router holding every module's routes: a request is matched once, not once per module
  // (each module's router matched the path, read the Host header and added two middleware layers
  // to every request: ~5 µs of a replay's ~165). A path with no route for the method is answered
  // 405 with every method any module serves on it.
  const routes = new Router();
  for (const module of modules) routes.use(module.router.routes());
  app.use(routes.routes());
  app.use(routes.allowedMethods());
  for (const module of modules) if (module.fallback) app.use(module.fallback);
  return app;
}
