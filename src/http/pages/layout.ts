import { html, type Html } from './html.js';
import type { UiSession } from '../../principals/sessions.js';
import { hasRole, type Principal } from '../../principals/roles.js';

/** Where a principal lands after signing in: approvers at the approvals, auditors at the review console. */
export function homeOf(principal: Principal): string {
  return hasRole(principal, 'approver', 'admin') ? '/ui/approvals' : '/ui/review';
}

/** The sections a session may open, as links: each role sees only what it allows. */
function nav(principal: Principal): Html {
  const links: Html[] = [];
  if (hasRole(principal, 'approver', 'admin')) links.push(html`<a href="/ui/approvals">Approvals</a>`);
  if (hasRole(principal, 'auditor', 'admin')) links.push(html`<a href="/ui/review">Search</a><a href="/ui/review/duplicates">Duplicates</a><a href="/ui/review/chain">Chain</a>`);
  return html`<nav class="sections">${links}</nav>`;
}

export function page(title: string, session: UiSession | null, body: Html): string {
  return `<!doctype html>\n` + html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Gatehouse</title>
<link rel="stylesheet" href="/ui/style.css">
</head>
<body>
<header class="top">
  <a class="brand" href="${session ? homeOf(session.principal) : '/ui/login'}">Gatehouse</a>
  ${session ? nav(session.principal) : ''}
  ${session ? html`<div class="who"><span>${session.principal.name ?? session.principal.id} · ${session.principal.account_id}</span>
    <form method="post" action="/ui/logout"><input type="hidden" name="csrf" value="${session.csrfToken}"><button class="link" type="submit">Sign out</button></form></div>` : ''}
</header>
<main>
${body}
</main>
</body>
</html>
`.value;
}

export function loginPage(error: string | null): string {
  return page('Sign in', null, html`<div class="login card">
  <h1>Sign in</h1>
  <p class="muted">Use your approver, auditor or admin API key. It is exchanged for a session and never stored in the browser.</p>
  ${error ? html`<div class="error" role="alert">${error}</div>` : ''}
  <form method="post" action="/ui/login">
    <label for="key">API key</label>
    <input id="key" name="key" type="password" autocomplete="off" required placeholder="gh_…">
    <div class="buttons"><button class="primary" type="submit">Sign in</button></div>
  </form>
</div>`);
}

export function errorPage(session: UiSession | null, code: string, message: string): string {
  return page('Error', session, html`<div class="card">
  <h1>That did not work</h1>
  <div class="error" role="alert"><code>${code}</code>: ${message}</div>
  <p><a href="${session ? homeOf(session.principal) : '/ui/login'}">Back</a></p>
</div>`);
}

/** "4 min 10 s left" — the page has no script, so it is the time left when the page was made. */
export function timeLeft(expiresAt: string, now: number): string {
  const ms = Date.parse(expiresAt) - now;
  if (ms <= 0) return 'expired';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s left`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s left`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min left`;
  return `${Math.floor(h / 24)} days left`;
}
