import test from 'ava';
import { ARTIFACTS, assertCommandInert, useBrowser } from '../helpers/browser.js';
import fs from 'node:fs';
import path from 'node:path';
import { ACCOUNT, newKey, payment, paymentsPolicy, startApprovalApp } from '../approvals/approval-app.js';

const { browserTest, browser } = useBrowser('approver page');

// The browser flow is about the page, not the store: SQLite is enough here.
browserTest('an approver signs in, opens a pending approval, sees target, consequence and fingerprint, approves with a reason, and the gateway retry gets execute true', async (t) => {
  const app = await startApprovalApp(t, 'sqlite', paymentsPolicy());
  const key = newKey();
  const claim = await app.claim(key, payment(125_000));
  const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto(`${app.url}/ui/approvals`);
  t.true(page.url().endsWith('/ui/login'), 'without a session the pages send you to sign in');
  await page.fill('#key', app.approver);
  await page.click('button[type=submit]');
  await page.waitForURL('**/ui/approvals');
  const cookies = await context.cookies();
  t.like(cookies.find((c) => c.name === 'gatehouse_ui'), { httpOnly: true, sameSite: 'Strict', path: '/ui' });
  await page.click(`a[href="/ui/approvals/${claim.body.approval.id}"]`);
  t.is(await page.textContent('#target'), 'Supplier GmbH');
  t.is(await page.textContent('#consequence'), 'Sends 1250 EUR');
  t.is(await page.textContent('#fingerprint'), claim.body.operation.fingerprint);
  t.is(await page.textContent('#idempotency-key'), key);
  t.regex(await page.textContent('#reversible') ?? '', /cannot be undone/);
  t.regex(await page.textContent('#command') ?? '', /"amount": 125000/);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'approval-detail.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(ARTIFACTS, 'approval-detail-phone.png'), fullPage: true });
  await page.fill('#reason', 'Invoice 1182 matches the purchase order');
  await page.click('button[value=approve]');
  await page.waitForSelector('.state-approved');
  const retry = await app.claim(key, payment(125_000));
  t.is(retry.status, 200, retry.text);
  t.like(retry.body, { outcome: 'approved', execute: true });
  const approval = (await app.request('GET', `/v1/approvals/${claim.body.approval.id}`, { key: app.approver })).body.approval;
  t.is(approval.decisions[0].reason, 'Invoice 1182 matches the purchase order');
});

browserTest('a <script> in the command stays inert text, and a zero-width character is shown as a visible marker', async (t) => {
  const app = await startApprovalApp(t, 'sqlite', paymentsPolicy());
  const sneaky = payment(100, {
    command: { amount: 100, currency: 'EUR', to: 'DE89\u200B3704', note: '<script>document.title="pwned";window.__pwned=1</script><img src=x onerror="window.__pwned=2">' },
    summary: { target: 'Acme\u202Eevil', operation: '<b>bold</b>', consequence: 'x', reversible: true },
  });
  const claim = await app.claim(newKey(), sneaky);
  const context = await browser().newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto(`${app.url}/ui/login`);
  await page.fill('#key', app.approver);
  await page.click('button[type=submit]');
  await page.waitForURL('**/ui/approvals');
  await page.goto(`${app.url}/ui/approvals/${claim.body.approval.id}`);
  await assertCommandInert(t, page);
  t.is(await page.textContent('#target'), 'Acme⟨U+202E⟩evil');
  t.is(await page.textContent('#operation'), '<b>bold</b>');
  t.regex(await page.textContent('.notice') ?? '', /2 invisible or direction-changing characters/);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'approval-detail-hidden-characters.png'), fullPage: true });
});

test('[sqlite] a form post without the CSRF token, or with a wrong one, is refused 403 csrf_failed and decides nothing', async (t) => {
  const app = await startApprovalApp(t, 'sqlite', paymentsPolicy());
  const claim = await app.claim(newKey(), payment());
  const login = await fetch(`${app.url}/ui/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key: app.approver }) });
  t.is(login.status, 303);
  const setCookie = login.headers.get('set-cookie') ?? '';
  t.regex(setCookie, /HttpOnly/i);
  t.regex(setCookie, /SameSite=Strict/i);
  t.regex(setCookie, /Path=\/ui/i);
  t.notRegex(setCookie, /Secure/i, 'Secure only when the request came over TLS');
  const cookie = setCookie.split(';')[0]!;
  const stored = await app.context.store.db.selectFrom('ui_sessions').selectAll().execute();
  t.is(stored.length, 1);
  t.false(cookie.includes(stored[0]!.id_hash), 'only the SHA-256 of the session id is stored');
  const post = (fields: Record<string, string>) => fetch(`${app.url}/ui/approvals/${claim.body.approval.id}/decisions`, {
    method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ decision: 'approve', fingerprint: claim.body.operation.fingerprint, reason: 'ok', ...fields }),
  });
  for (const res of [await post({}), await post({ csrf: 'x'.repeat(43) })]) {
    t.is(res.status, 403);
    t.is((await res.json() as { error: { code: string } }).error.code, 'csrf_failed');
  }
  const page = await fetch(`${app.url}/ui/approvals/${claim.body.approval.id}`, { headers: { cookie } });
  const html = await page.text();
  t.is(page.status, 200);
  t.regex(page.headers.get('content-security-policy') ?? '', /default-src 'none'.*form-action 'self'.*frame-ancestors 'none'/);
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
  t.is((await post({ csrf })).status, 303);
  t.is((await app.request('GET', `/v1/approvals/${claim.body.approval.id}`, { key: app.approver })).body.approval.state, 'approved');
  const gatewayLogin = await fetch(`${app.url}/ui/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key: await app.keyFor(ACCOUNT, 'gateway') }) });
  t.is(gatewayLogin.status, 401, 'only approvers and admins sign in');
});

test('[sqlite] a principal that retried someone else\'s claim sees no decision form on the approval page, and its post is refused with that reason shown', async (t) => {
  const app = await startApprovalApp(t, 'sqlite', paymentsPolicy());
  const both = await app.keyFor(ACCOUNT, 'gateway', 'approver');
  const key = newKey();
  const claim = await app.claim(key, payment());
  t.is((await app.claim(key, payment(), both)).status, 202, 'the retry by the second key');
  const login = await fetch(`${app.url}/ui/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key: both }) });
  t.is(login.status, 303);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const page = await (await fetch(`${app.url}/ui/approvals/${claim.body.approval.id}`, { headers: { cookie } })).text();
  t.regex(page, /You asked for this operation \(your key claimed it\), so someone else must decide it\./);
  t.notRegex(page, /<form[^>]*decisions/, 'no decision form');
  // Posting anyway (a form kept from before): refused, and the page says why.
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? (await app.context.store.db.selectFrom('ui_sessions').select('csrf_token').executeTakeFirstOrThrow()).csrf_token;
  const post = await fetch(`${app.url}/ui/approvals/${claim.body.approval.id}/decisions`, {
    method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, decision: 'approve', fingerprint: claim.body.operation.fingerprint, reason: 'looks fine' }),
  });
  t.is(post.status, 403);
  t.regex(await post.text(), /cannot decide on its approval/);
  const approval = (await app.request('GET', `/v1/approvals/${claim.body.approval.id}`, { key: app.approver })).body.approval;
  t.is(approval.state, 'pending');
  t.deepEqual(approval.decisions, []);
});

/** Signs in through the form; the session's cookie and its CSRF token. */
async function signIn(app: Awaited<ReturnType<typeof startApprovalApp>>, key: string): Promise<{ cookie: string; csrf: string }> {
  const login = await fetch(`${app.url}/ui/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key }) });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const sessions = await app.context.store.db.selectFrom('ui_sessions').select(['csrf_token', 'expires_at']).orderBy('expires_at', 'desc').execute();
  return { cookie, csrf: sessions[0]!.csrf_token };
}

test('[sqlite] the decision form takes what the API takes and needs a reason: a missing or over-long one is refused on the page, and nothing is decided', async (t) => {
  const app = await startApprovalApp(t, 'sqlite', paymentsPolicy());
  const claim = await app.claim(newKey(), payment());
  const { cookie, csrf } = await signIn(app, app.approver);
  const post = (fields: Record<string, string>) => fetch(`${app.url}/ui/approvals/${claim.body.approval.id}/decisions`, {
    method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, decision: 'approve', fingerprint: claim.body.operation.fingerprint, ...fields }),
  });
  for (const [what, fields, message] of [
    ['no reason', {}, /give a reason for your decision/],
    ['a blank reason', { reason: '   ' }, /give a reason for your decision/],
    ['a reason of 2001 characters', { reason: 'x'.repeat(2001) }, /reason/],
    ['an unknown decision', { reason: 'ok', decision: 'maybe' }, /decision/],
  ] as Array<[string, Record<string, string>, RegExp]>) {
    const res = await post(fields);
    t.is(res.status, 400, what);
    const text = await res.text();
    t.regex(text, /invalid_request/, what);
    t.regex(text, message, what);
    t.regex(text, /<form[^>]*decisions/, `${what}: the page shows the approval again, with its form`);
  }
  const approval = (await app.request('GET', `/v1/approvals/${claim.body.approval.id}`, { key: app.approver })).body.approval;
  t.is(approval.state, 'pending');
  t.deepEqual(approval.decisions, []);
  t.is((await post({ reason: 'x'.repeat(2000) })).status, 303, '2000 characters, as the API takes');
});

test('[sqlite] the pending list puts apart what the viewer may not decide: requests it asked for, and ones it already decided', async (t) => {
  const app = await startApprovalApp(t, 'sqlite', paymentsPolicy({ approvers: 2 }));
  const both = await app.keyFor(ACCOUNT, 'gateway', 'approver');
  const mine = await app.claim(newKey(), payment(100), both);
  const retriedKey = newKey();
  const retried = await app.claim(retriedKey, payment(200));
  await app.claim(retriedKey, payment(200), both);
  const decided = await app.claim(newKey(), payment(300));
  t.is((await app.decide(decided.body.approval.id, 'approve', decided.body.operation.fingerprint, both)).status, 200);
  const open = await app.claim(newKey(), payment(400));
  const { cookie } = await signIn(app, both);
  const page = await (await fetch(`${app.url}/ui/approvals`, { headers: { cookie } })).text();
  const [toDecide, waiting = ''] = page.split('<h2>Waiting on others</h2>');
  const link = (c: { body: { approval: { id: string } } }) => `/ui/approvals/${c.body.approval.id}`;
  t.true(toDecide!.includes(link(open)), 'the one it may decide');
  for (const c of [mine, retried, decided]) t.false(toDecide!.includes(link(c)));
  t.true(waiting.includes(link(mine)) && waiting.includes(link(retried)) && waiting.includes(link(decided)));
  t.regex(waiting, /You asked for this operation: someone else decides it\./);
  t.regex(waiting, /You have decided; waiting for other approvers\./);
});
