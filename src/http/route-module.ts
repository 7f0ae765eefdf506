import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { BodyValidator } from './validate.js';

/**
 * One domain's routes; `publicPaths` are answered without an API key. `bodies` names the
 * validator of each route that takes a JSON body (`"POST /v1/operations"` → validateClaim), so
 * test/http/openapi.test.ts can hold the router, schema/requests and the OpenAPI document together.
 * `fallback` runs when no route of any module matched (the pages answer their own unknown paths as a page).
 */
export interface RouteModule {
  router: Router;
  publicPaths?: RegExp[];
  bodies?: Readonly<Record<string, BodyValidator<unknown>>>;
  fallback?: Middleware;
}
