/**
 * The web layer's session handling, shared by the approver pages and the review console: one
 * cookie, one sign-in, the same CSRF checks and security headers on every page.
 */
import type { Context, Next } from 'koa';
import { DomainError } from '../../core/errors.js';
import { httpErrorOf } from '../error-status.js';
import type { Approvals } from '../../approvals/approvals.js';
import { readForm } from './form.js';
import { errorPage } from './layout.js';
import { constantTimeEqual } from '../../core/hash.js';
import type { UiSession } from '../../principals/sessions.js';

export const COOKIE = 'gatehouse_ui';
export const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export function sendHtml(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

/** A page view: without a live session, go sign in. */
export async function viewingSession(ctx: Context, approvals: Approvals): Promise<UiSession | null> {
  const session = await approvals.sessions.lookup(ctx.cookies.get(COOKIE));
  if (!session) ctx.redirect('/ui/login');
  ctx.state.uiSession = session;
  return session;
}

/** A form post: a live session and its CSRF token, compared in constant time. */
export async function postingSession(ctx: Context, approvals: Approvals): Promise<UiSession> {
  refuseCrossSite(ctx);
  const session = await approvals.sessions.lookup(ctx.cookies.get(COOKIE));
  if (!session) throw new DomainError('unauthenticated', 'your session ended: sign in again');
  ctx.state.uiSession = session;
  const form = await readForm(ctx);
  ctx.state.form = form;
  if (!constantTimeEqual(form.get('csrf') ?? '', session.csrfToken)) {
    throw new DomainError('csrf_failed', 'the form is missing its CSRF token or it does not match your session: reload the page and try again');
  }
  return session;
}

/**
 * A second wall behind SameSite=Strict and the token: browsers say where a form post
 * came from. (Origin is not compared: behind a TLS proxy it differs from what Koa sees.)
 */
export function refuseCrossSite(ctx: Context): void {
  const site = ctx.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') {
    throw new DomainError('csrf_failed', 'form posts are accepted only from these pages');
  }
}

/** Security headers on every page; errors as a page for a browser, as the usual JSON for anything else. */
export function uiErrors(approvals: Approvals) {
  return async (ctx: Context, next: Next): Promise<void> => {
    ctx.set(SECURITY_HEADERS);
    try {
      await next();
    } catch (error) {
      if (!(error instanceof DomainError) || !ctx.get('accept').includes('text/html')) throw error;
      const session = (ctx.state.uiSession as UiSession | undefined) ?? await approvals.sessions.lookup(ctx.cookies.get(COOKIE)).catch(() => null);
      sendHtml(ctx, httpErrorOf(error).status, errorPage(session, httpErrorOf(error).code, error.message));
    }
  };
}
