import Router from '@koa/router';
import type { AppContext } from '../context.js';
import { principalOf } from '../http/auth.js';
import { readJsonBody } from '../http/body.js';
import { bodyValidator } from '../http/validate.js';
import { enumParam, integerParam, stringParam } from '../http/query.js';
import type { RouteModule } from '../http/route-module.js';
import type { DecisionInput } from './decisions.js';

const validateDecision = bodyValidator<DecisionInput>({
  type: 'object', required: ['decision', 'fingerprint'], additionalProperties: false,
  properties: {
    decision: { enum: ['approve', 'deny'] },
    fingerprint: { type: 'string', minLength: 1, maxLength: 128 },
    reason: { type: ['string', 'null'], maxLength: 2000 },
  },
});

const STATES = ['pending', 'approved', 'denied', 'expired'] as const;
const MAX_PAGE = 200;

/** `/v1/approvals`: approvers of the account and admins read and decide. */
export function approvalRoutes(context: AppContext): RouteModule {
  const router = new Router();
  router.get('/v1/approvals', async (ctx) => {
    ctx.body = await context.approvals.list(principalOf(ctx), {
      state: enumParam(ctx, 'state', STATES),
      limit: integerParam(ctx, 'limit', { fallback: 50, min: 1, max: MAX_PAGE }),
      accountId: stringParam(ctx, 'account_id'),
      cursor: stringParam(ctx, 'cursor'),
    });
  });
  router.get('/v1/approvals/:id', async (ctx) => {
    ctx.body = { approval: await context.approvals.get(principalOf(ctx), ctx.params.id!) };
  });
  router.post('/v1/approvals/:id/decisions', async (ctx) => {
    const principal = principalOf(ctx);
    const body = validateDecision(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    ctx.body = { approval: await context.approvals.decide(principal, ctx.params.id!, body) };
  });
  return { router };
}
