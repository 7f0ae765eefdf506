import type { AppContext } from '../../context.js';
import { principalOf } from '../auth.js';
import { readJsonBody } from '../body.js';
import { validateDecision } from '../request-schemas.js';
import { accountIdParam, enumParam, integerParam, stringParam } from '../query.js';
import { workScopeOf } from '../deadline.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { APPROVAL_STATES } from '../../approvals/approval-list.js';

const MAX_PAGE = 200;

/** `/v1/approvals`: approvers of the account and admins read and decide. */
export function approvalRoutes(deps: Pick<AppContext, 'approvals'>): RouteModule {
  const router = newRouter();
  router.get('/v1/approvals', async (ctx) => {
    ctx.body = await deps.approvals.list(principalOf(ctx), {
      state: enumParam(ctx, 'state', APPROVAL_STATES),
      limit: integerParam(ctx, 'limit', { fallback: 50, min: 1, max: MAX_PAGE }),
      accountId: accountIdParam(ctx),
      cursor: stringParam(ctx, 'cursor'),
    });
  });
  router.get('/v1/approvals/:id', async (ctx) => {
    ctx.body = { approval: await deps.approvals.get(principalOf(ctx), ctx.params.id!) };
  });
  router.post('/v1/approvals/:id/decisions', async (ctx) => {
    const principal = principalOf(ctx);
    const body = validateDecision(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    ctx.body = { approval: await deps.approvals.decide(principal, ctx.params.id!, body, workScopeOf(ctx)) };
  });
  return {
    router,
    bodies: { 'POST /v1/approvals/:id/decisions': validateDecision },
    queries: { 'GET /v1/approvals': ['state', 'account_id', 'limit', 'cursor'] },
  };
}
