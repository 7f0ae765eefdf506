import type { AppContext } from '../../context.js';
import { readJsonBody } from '../body.js';
import { principalOf } from '../auth.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { validateCreatePrincipal } from '../request-schemas.js';
import { workScopeOf } from '../deadline.js';
import { requireRole } from '../../principals/roles.js';

export function principalRoutes(deps: Pick<AppContext, 'principals'>): RouteModule {
  const router = newRouter();
  router.post('/v1/principals', async (ctx) => {
    requireRole(principalOf(ctx), 'admin');
    const body = validateCreatePrincipal(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    const created = await deps.principals.create(body, workScopeOf(ctx));
    ctx.status = 201;
    ctx.body = created;
  });
  return { router, bodies: { 'POST /v1/principals': validateCreatePrincipal } };
}
