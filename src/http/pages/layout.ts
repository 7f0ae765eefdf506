import { html, type Html } from './html.js';
import type { UiSession } from '../../principals/sessions.js';

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
  <a href="/ui/approvals">Gatehouse approvals</a>
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
  <p class="muted">Use your approver API key. It is exchanged for a session and never stored in the browser.</p>
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
  <p><a href="/ui/approvals">Back to the pending approvals</a></p>
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
