import type Router from '@koa/router';

/** One domain's routes; `publicPaths` are answered without an API key. */
export interface RouteModule {
  router: Router;
  publicPaths?: RegExp[];
}
