import Router from '@koa/router';
import type { AppContext } from '../../context.js';
import { readJsonBody } from '../body.js';
import { principalOf } from '../auth.js';
import { bodyValidator } from '../validate.js';
import type { RouteModule } from '../route-module.js';
import createPrincipalSchema from '../../../schema/requests/create-principal.json' with { type: 'json' };
import { requireRole, type Role } from '../../principals/roles.js';

interface CreatePrincipalBody {
  account_id: string;
  roles: Role[];
  name?: string | null;
}

const validateCreatePrincipal = bodyValidator<CreatePrincipalBody>(createPrincipalSchema);

export function principalRoutes(deps: Pick<AppContext, 'principals'>): RouteModule {
  const router = new Router();
  router.post('/v1/principals', async (ctx) => {
    requireRole(principalOf(ctx), 'admin');
    const body = validateCreatePrincipal(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    const created = await deps.principals.create(body);
    ctx.status = 201;
    ctx.body = created;
  });
  return { router };
}
