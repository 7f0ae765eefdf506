import Koa from 'koa';
import type { AppContext } from '../context.js';
import { errorMiddleware } from './error-middleware.js';
import { authMiddleware } from './auth.js';
import type { RouteModule } from './route-module.js';

export interface HttpOptions {
  maxBodyBytes: number;
}

/** The Koa app: errors first, then authentication, then one router per domain. */
export function createApp(context: AppContext, modules: RouteModule[], options: HttpOptions): Koa {
  const app = new Koa();
  app.proxy = false;
  app.use(errorMiddleware(context.logger));
  app.use(async (ctx, next) => {
    ctx.state.maxBodyBytes = options.maxBodyBytes;
    await next();
  });
  app.use(authMiddleware(context.principals, modules.flatMap((m) => m.publicPaths ?? [])));
  for (const module of modules) {
    app.use(module.router.routes());
    app.use(module.router.allowedMethods());
  }
  return app;
}
