import type { Context } from 'koa';
import type { AppContext } from '../../context.js';
import { DomainError } from '../../core/errors.js';
import { principalOf } from '../auth.js';
import { BODY_DEPTH, readJsonBody } from '../body.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { requireRole } from '../../principals/roles.js';
import { validateClaim, validateReport, validateResolve } from '../request-schemas.js';
import { parseIdempotencyKey } from '../../operations/claim-request.js';
import type { ClaimAnswer, ClaimOutcome } from '../../operations/claim-types.js';
import { normalizeReport } from '../../operations/report-types.js';
import { workScopeOf } from '../deadline.js';
import { parseSearchParams, SEARCH_PARAM_NAMES } from '../../operations/search-params.js';

/** The status of each claim outcome (docs/retry-contract.md, the claim outcome table). */
const OUTCOME_STATUS: Record<ClaimOutcome, number> = {
  created: 201, approval_required: 202, approved: 200, denied: 403, in_progress: 409, unknown: 409, replayed: 200, reused: 200,
};

export function operationRoutes(deps: Pick<AppContext, 'operations' | 'metrics'>): RouteModule {
  const router = newRouter();
  const operations = () => deps.operations;

  router.post('/v1/operations', async (ctx) => {
    const principal = principalOf(ctx);
    requireRole(principal, 'gateway', 'admin');
    const key = parseIdempotencyKey(ctx.headers['idempotency-key']);
    const body = validateClaim(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    let answer: ClaimAnswer;
    try {
      answer = await operations().claim(principal, key, body, workScopeOf(ctx));
    } catch (error) {
      // Refusals that are claim outcomes of their own (a changed payload, a busy scope) are counted too.
      if (error instanceof DomainError && (error.code === 'fingerprint_mismatch' || error.code === 'scope_busy')) deps.metrics.countClaim(error.code);
      throw error;
    }
    deps.metrics.countClaim(answer.outcome);
    sendClaimAnswer(ctx, answer);
  });

  router.get('/v1/operations', async (ctx) => {
    // See docs/http-api.md: every filter, newest first or order=asc, a cursor that carries the question.
    ctx.body = await operations().search(principalOf(ctx), parseSearchParams(ctx.query));
  });

  router.get('/v1/operations/:id', async (ctx) => {
    ctx.body = { operation: await operations().get(principalOf(ctx), ctx.params.id!, workScopeOf(ctx)) };
  });

  router.post('/v1/operations/:id/events', async (ctx) => {
    const principal = principalOf(ctx);
    const report = normalizeReport(validateReport(await readJsonBody(ctx, ctx.state.maxBodyBytes, BODY_DEPTH.response)));
    ctx.body = { operation: await operations().report(principal, ctx.params.id!, report, workScopeOf(ctx)) };
  });

  router.post('/v1/operations/:id/resolve', async (ctx) => {
    const principal = principalOf(ctx);
    requireRole(principal, 'admin');
    const body = validateResolve(await readJsonBody(ctx, ctx.state.maxBodyBytes, BODY_DEPTH.response));
    ctx.body = { operation: await operations().resolve(principal, ctx.params.id!, body, workScopeOf(ctx)) };
  });

  router.get('/v1/operations/:id/timeline', async (ctx) => {
    ctx.body = await operations().timeline(principalOf(ctx), ctx.params.id!);
  });

  return {
    router,
    bodies: { 'POST /v1/operations': validateClaim, 'POST /v1/operations/:id/events': validateReport, 'POST /v1/operations/:id/resolve': validateResolve },
    queries: { 'GET /v1/operations': SEARCH_PARAM_NAMES },
  };
}

function sendClaimAnswer(ctx: Context, answer: ClaimAnswer): void {
  const { retryAfterSeconds, ...body } = answer;
  ctx.status = OUTCOME_STATUS[answer.outcome];
  if (retryAfterSeconds !== undefined) ctx.set('Retry-After', String(retryAfterSeconds));
  if (answer.outcome === 'replayed') ctx.set('Idempotent-Replayed', 'true');
  ctx.body = body;
}



