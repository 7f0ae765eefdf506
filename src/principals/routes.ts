import Router from '@koa/router';
import type { AppContext } from '../context.js';
import { readJsonBody } from '../http/body.js';
import { principalOf } from '../http/auth.js';
import { bodyValidator } from '../http/validate.js';
import type { RouteModule } from '../http/route-module.js';
import createPrincipalSchema from '../../schema/requests/create-principal.json' with { type: 'json' };
import { requireRole, type Role } from './roles.js';

interface CreatePrincipalBody {
  account_id: string;
  roles: Role[];
  name?: string | null;
}

const validateCreatePrincipal = bodyValidator<CreatePrincipalBody>(createPrincipalSchema);

export function principalRoutes(context: AppContext): RouteModule {
  const router = new Router();
  router.post('/v1/principals', async (ctx) => {
    requireRole(principalOf(ctx), 'admin');
    const body = validateCreatePrincipal(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    const created = await context.principals.create(body);
    ctx.status = 201;
    ctx.body = created;
  });
  return { router };
}
