import type { AppContext } from '../../context.js';
import { principalOf } from '../auth.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { DUPLICATES_PARAM_NAMES, parseDuplicatesParams } from '../../operations/duplicates-params.js';

/** Incident review reports (docs/http-api.md) for auditors and admins; search itself is `GET /v1/operations`. */
export function reviewRoutes(deps: Pick<AppContext, 'operations'>): RouteModule {
  const router = newRouter();
  router.get('/v1/review/duplicates', async (ctx) => {
    ctx.body = await deps.operations.duplicates(principalOf(ctx), parseDuplicatesParams(ctx.query));
  });
  return { router, queries: { 'GET /v1/review/duplicates': DUPLICATES_PARAM_NAMES } };
}
