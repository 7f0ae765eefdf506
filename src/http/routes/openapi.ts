import Router from '@koa/router';
import openapi from '../../../schema/openapi.json' with { type: 'json' };
import type { RouteModule } from '../route-module.js';

/** The OpenAPI 3.1 document of every route; a test walks the routers and fails on any route it lacks. */
export function openapiRoutes(): RouteModule {
  const router = new Router();
  router.get('/v1/openapi.json', (ctx) => {
    ctx.body = openapi;
  });
  return { router, publicPaths: [/^\/v1\/openapi\.json$/] };
}
