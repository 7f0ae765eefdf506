import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.js';
import { DomainError } from '../../core/errors.js';
import { requireRole, type Principal } from '../../principals/roles.js';
import type { UiSession } from '../../principals/sessions.js';
import { parseSearchParams, type SearchQuery } from '../../operations/search-params.js';
import { parseDuplicatesParams, DEFAULT_WINDOW_SECONDS, type DuplicatesQuery } from '../../operations/duplicates-params.js';
import { accountIdParam, integerParam, paramError, type RawParams } from '../../operations/query-params.js';
import { approvalsOfOperation } from '../../approvals/for-operation.js';
import { chainPanel } from '../../ledger/chain-panel.js';
import { sendHtml, viewingSession } from './session.js';
import { workScopeOf } from '../deadline.js';
import type { WorkScope } from '../../store/work-scope.js';
import { chainPage, duplicatesPage, operationPage, searchPage, type OperationData } from './review-pages.js';

export type ReviewPageDeps = Pick<AppContext, 'operations' | 'approvals' | 'store' | 'ledger' | 'ledgerId' | 'clock'>;

/**
 * The review console (docs/http-api.md) under /ui/review, for auditor and admin sessions: search,
 * an operation's page, the duplicates report and each account's chain. GETs only, so no CSRF
 * token is needed; each page answers `?format=json` with the same data as JSON.
 */
export function reviewPages(router: Router, deps: ReviewPageDeps): void {
  router.get('/review', async (ctx) => {
    const session = await reviewSession(ctx, deps);
    if (!session) return;
    const raw = formParams(ctx);
    let query: SearchQuery | null = null;
    let problem: DomainError | null = null;
    try {
      query = parseSearchParams(raw);
      // Nothing asked yet: an auditor must first choose the account.
      const page = query.accountId === undefined && !raw.cursor ? null : await deps.operations.search(session.principal, query);
      if (asJson(ctx)) return sendJson(ctx, page ?? { items: [], next_cursor: null });
      return sendHtml(ctx, 200, searchPage(session, query, page, null, raw));
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'invalid_request') throw error;
      problem = error;
    }
    if (asJson(ctx)) throw problem;
    sendHtml(ctx, 400, searchPage(session, query, null, problem.message, raw));
  });

  router.get('/review/operations/:id', async (ctx) => {
    const session = await reviewSession(ctx, deps);
    if (!session) return;
    const data = await operationData(deps, session.principal, ctx.params.id!, workScopeOf(ctx));
    if (asJson(ctx)) return sendJson(ctx, data);
    sendHtml(ctx, 200, operationPage(session, data));
  });

  router.get('/review/duplicates', async (ctx) => {
    const session = await reviewSession(ctx, deps);
    if (!session) return;
    const raw = formParams(ctx);
    let query: DuplicatesQuery | null = null;
    try {
      query = parseDuplicatesParams(raw);
      const page = query.accountId === undefined ? null : await deps.operations.duplicates(session.principal, query);
      if (asJson(ctx)) return sendJson(ctx, page ?? { items: [], next_cursor: null });
      return sendHtml(ctx, 200, duplicatesPage(session, query, page, null));
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'invalid_request' || asJson(ctx)) throw error;
      sendHtml(ctx, 400, duplicatesPage(session, query ?? { accountId: raw.account_id as string | undefined, windowSeconds: DEFAULT_WINDOW_SECONDS, limit: 50, after: null }, null, error.message));
    }
  });

  router.get('/review/chain', async (ctx) => {
    const session = await reviewSession(ctx, deps);
    if (!session) return;
    const raw = formParams(ctx);
    const accountId = accountIdParam(raw) ?? null;
    const before = raw.before_seq === undefined ? null : integerParam(raw, 'before_seq', { fallback: 1, min: 1, max: Number.MAX_SAFE_INTEGER });
    const panel = accountId === null ? null : await chainPanel(deps.store.db, deps.ledger, deps.ledgerId, accountId, before, 50);
    if (asJson(ctx)) {
      if (!panel) throw paramError('account_id', 'is required');
      return sendJson(ctx, panel);
    }
    sendHtml(ctx, 200, chainPage(session, accountId, panel));
  });
}

/** The operation, its timeline with every payload (auditors read them all), its command and approvals. */
async function operationData(deps: ReviewPageDeps, principal: Principal, id: string, workScope: WorkScope): Promise<OperationData> {
  const operation = await deps.operations.get(principal, id, workScope);
  const { events } = await deps.operations.timeline(principal, id);
  const attempted = events.find((e) => e.type === 'attempted');
  const approvals = await approvalsOfOperation(deps.store.db, deps.ledger, deps.clock.now(), operation.account_id, id);
  return { operation, command: attempted?.payload ?? null, events, approvals };
}

/** A review page needs a session of an auditor or admin; anyone else is refused (403 page), anonymous goes to sign in. */
async function reviewSession(ctx: Context, deps: ReviewPageDeps): Promise<UiSession | null> {
  const session = await viewingSession(ctx, deps.approvals);
  if (session) requireRole(session.principal, 'auditor', 'admin');
  return session;
}

/** The query without `format`, and without the empty fields a GET form sends for every blank input. */
function formParams(ctx: Context): RawParams {
  const raw: RawParams = {};
  for (const [name, value] of Object.entries(ctx.query)) {
    if (name === 'format' || value === '') continue;
    raw[name] = value;
  }
  return raw;
}

function asJson(ctx: Context): boolean {
  return ctx.query.format === 'json';
}

function sendJson(ctx: Context, body: unknown): void {
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = body;
}
