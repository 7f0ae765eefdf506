import Router from '@koa/router';
import type { AppContext } from '../context.js';
import { principalOf } from '../http/auth.js';
import { readJsonBody } from '../http/body.js';
import { AppError } from '../http/errors.js';
import { bodyValidator } from '../http/validate.js';
import type { RouteModule } from '../http/route-module.js';
import type { DecisionInput } from './decisions.js';
import type { ApprovalView } from './seam.js';

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
    const state = optionalString(ctx.query.state, 'state');
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) {
      throw new AppError('invalid_request', `the member "state" must be one of ${STATES.join(', ')}`);
    }
    const limitText = optionalString(ctx.query.limit, 'limit') ?? '50';
    const limit = Number(limitText);
    if (!/^\d+$/.test(limitText) || limit < 1 || limit > MAX_PAGE) throw new AppError('invalid_request', `the member "limit" must be an integer from 1 to ${MAX_PAGE}`);
    ctx.body = await context.approvals.list(principalOf(ctx), {
      state: state as ApprovalView['state'] | undefined, limit,
      accountId: optionalString(ctx.query.account_id, 'account_id'), cursor: optionalString(ctx.query.cursor, 'cursor'),
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

function optionalString(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) throw new AppError('invalid_request', `the member "${name}" is given more than once`);
  return value;
}
