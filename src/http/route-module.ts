import type Router from '@koa/router';
import type { BodyValidator } from './validate.js';

/**
 * One domain's routes; `publicPaths` are answered without an API key. `bodies` names the
 * validator of each route that takes a JSON body (`"POST /v1/operations"` → validateClaim), so
 * test/http/openapi.test.ts can hold the router, schema/requests and the OpenAPI document together.
 */
export interface RouteModule {
  router: Router;
  publicPaths?: RegExp[];
  bodies?: Readonly<Record<string, BodyValidator<unknown>>>;
}
