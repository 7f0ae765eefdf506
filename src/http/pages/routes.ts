import type { Context, Next } from 'koa';
import type { AppContext } from '../../context.js';
import { DomainError } from '../../core/errors.js';
import { httpErrorOf } from '../error-status.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { hasRole } from '../../principals/roles.js';
import { readForm } from './form.js';
import { errorPage, homeOf, loginPage } from './layout.js';
import type { Approvals } from '../../approvals/approvals.js';
import { reviewPages, type ReviewPageDeps } from './review-routes.js';
import { detailPage, listPage } from './pages.js';
import { COOKIE, postingSession, refuseCrossSite, SECURITY_HEADERS, sendHtml, uiErrors, viewingSession } from './session.js';
import { clientOf, SignInThrottle } from './sign-in-throttle.js';
import { workScopeOf } from '../deadline.js';
import { validateDecision } from '../request-schemas.js';
import { STYLESHEET } from './style.js';

/** A sign-in form holds one key (~50 bytes) and a CSRF-free field or two: 4 KiB, within 5 s. */
const SIGN_IN_FORM_LIMITS = { maxBytes: 4 * 1024, timeoutMs: 5_000 };

/**
 * The web pages: the approvers' and the review console (review-routes.ts), one sign-in for both.
 * Not under /v1, so no Bearer key: the session cookie authenticates. GETs never change state.
 */
export function uiRoutes(deps: Pick<AppContext, 'approvals' | 'principals' | 'clock' | 'monotonic' | 'logger'> & ReviewPageDeps): RouteModule {
  const { approvals } = deps;
  // A monotonic clock: a wall clock stepped back would stretch every lock by the size of the step.
  const signInThrottle = new SignInThrottle(deps.monotonic);
  const router = newRouter({ prefix: '/ui' });
  router.use(uiErrors(approvals));

  router.get('/style.css', (ctx) => {
    ctx.type = 'text/css';
    ctx.set('cache-control', 'public, max-age=300');
    ctx.body = STYLESHEET;
  });
  router.get('/login', async (ctx) => {
    const session = await approvals.sessions.lookup(ctx.cookies.get(COOKIE));
    if (session) return ctx.redirect(homeOf(session.principal));
    sendHtml(ctx, 200, loginPage(null));
  });
  router.post('/login', async (ctx) => {
    refuseCrossSite(ctx);
    // The form is read before the attempt is counted: a counted attempt holds a place in the
    // client's budget until its verdict, so a body that never arrives would hold it hostage
    // (five such connections locked every approver behind the same address out). The form is
    // small and must arrive within a few seconds.
    const form = await readForm(ctx, SIGN_IN_FORM_LIMITS);
    // Before the key is looked at: a locked-out client learns nothing, not even from the right key.
    const client = clientOf(ctx.ip);
    const admission = signInThrottle.admit(client);
    if (!admission.admitted) return refuseThrottled(ctx, admission.retryAfterSeconds);
    const { attempt } = admission;
    try {
      const key = form.get('key')?.trim() ?? '';
      const principal = await deps.principals.authenticate(key);
      // Approvers for the approvals, auditors for the review console, admins for both.
      if (!principal || !hasRole(principal, 'approver', 'auditor', 'admin')) {
        const lock = attempt.recordFailure();
        // The address only: the key tried is a secret (it may be a real key pasted into the wrong box).
        if (lock) deps.logger.warn({ client, locked_for_seconds: lock.lockedForSeconds }, 'approver sign-in locked out after repeated failures');
        return sendHtml(ctx, 401, loginPage('That key is unknown, revoked, or does not belong to an approver, auditor or admin.'));
      }
      const { sessionId } = await approvals.sessions.create(principal.id, workScopeOf(ctx));
      ctx.cookies.set(COOKIE, sessionId, { httpOnly: true, sameSite: 'strict', path: '/ui', secure: ctx.secure, overwrite: true, maxAge: 8 * 3600 * 1000 });
      ctx.status = 303;
      ctx.redirect(homeOf(principal));
    } finally {
      attempt.end();
    }
  });
  router.post('/logout', async (ctx) => {
    const session = await postingSession(ctx, approvals);
    await approvals.sessions.destroy(session.idHash, workScopeOf(ctx));
    ctx.cookies.set(COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/ui', secure: ctx.secure, maxAge: 0 });
    ctx.status = 303;
    ctx.redirect('/ui/login');
  });
  router.get('/approvals', async (ctx) => {
    const session = await viewingSession(ctx, approvals);
    if (!session) return;
    const { items } = await approvals.list(session.principal, { state: 'pending', limit: 200 });
    const listed = await Promise.all(items.map(async (approval) => ({ approval, askedFor: await approvals.askedFor(session.principal, approval) })));
    sendHtml(ctx, 200, listPage(session, listed, deps.clock.now()));
  });
  router.get('/approvals/:id', async (ctx) => {
    const session = await viewingSession(ctx, approvals);
    if (!session) return;
    const approval = await approvals.get(session.principal, ctx.params.id!);
    sendHtml(ctx, 200, detailPage(session, approval, deps.clock.now(), null, await approvals.askedFor(session.principal, approval)));
  });
  router.post('/approvals/:id/decisions', async (ctx) => {
    const session = await postingSession(ctx, approvals);
    const form = ctx.state.form as Map<string, string>;
    try {
      const reason = form.get('reason')?.trim() ?? '';
      // The page asks for a reason; past that the API's own schema checks the form, so it takes
      // nothing the API would refuse (a reason over 2000 characters, an unknown decision).
      if (reason === '') throw new DomainError('invalid_request', 'give a reason for your decision');
      const decision = form.get('decision');
      const input = validateDecision({ ...(decision === undefined ? {} : { decision }), fingerprint: form.get('fingerprint') ?? '', reason });
      await approvals.decide(session.principal, ctx.params.id!, input, workScopeOf(ctx));
    } catch (error) {
      if (!(error instanceof DomainError) || error.code === 'not_found' || error.code === 'forbidden') throw error;
      // Show the approval again, as it is now, with what went wrong.
      const approval = await approvals.get(session.principal, ctx.params.id!);
      const asked = await approvals.askedFor(session.principal, approval);
      return sendHtml(ctx, httpErrorOf(error).status, detailPage(session, approval, deps.clock.now(), { code: httpErrorOf(error).code, message: error.message }, asked));
    }
    ctx.status = 303;
    ctx.redirect(`/ui/approvals/${encodeURIComponent(ctx.params.id!)}`);
  });
  reviewPages(router, deps);
  // `GET /ui` itself: under a strict prefix a route `/` is `/ui/`, so it is declared beside the
  // prefixed routes, after them, so that uiErrors (a middleware of the whole prefix) wraps it too.
  const pages = newRouter();
  pages.use(router.routes());
  pages.get('/ui', async (ctx) => {
    const session = await approvals.sessions.lookup(ctx.cookies.get(COOKIE));
    ctx.redirect(session ? homeOf(session.principal) : '/ui/login');
  });
  return { router: pages, fallback: unknownPage(approvals) };
}

/** An unknown /ui path is a page too: a 404 page with the pages' security headers, not the API's JSON. */
function unknownPage(approvals: Approvals) {
  return async (ctx: Context, next: Next): Promise<void> => {
    await next();
    if ((ctx.path !== '/ui' && !ctx.path.startsWith('/ui/')) || ctx.status !== 404 || ctx.body !== undefined) return;
    ctx.set(SECURITY_HEADERS);
    const session = await approvals.sessions.lookup(ctx.cookies.get(COOKIE)).catch(() => null);
    sendHtml(ctx, 404, errorPage(session, 'not_found', 'There is no page at this address.'));
  };
}

/**
 * 429 with Retry-After, on the sign-in page like its other refusals. The same words whatever
 * key was sent: the answer must not tell whether the key exists.
 */
function refuseThrottled(ctx: Context, retryAfterSeconds: number): void {
  ctx.set('retry-after', String(retryAfterSeconds));
  const wait = retryAfterSeconds < 60 ? `${retryAfterSeconds} s` : `${Math.ceil(retryAfterSeconds / 60)} min`;
  sendHtml(ctx, 429, loginPage(`Too many failed sign-in attempts from your network address. Try again in ${wait}.`));
}

