import test from 'ava';
import { ARTIFACTS, assertCommandInert, useBrowser } from '../helpers/browser.js';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { ACCOUNT, seedIncident } from '../review/incident.js';
import { claim } from '../operations/claims.js';
import type { TestApp } from '../helpers/app.js';

const { browserTest, browser } = useBrowser('review console');

async function signIn(page: Page, app: TestApp, key: string): Promise<void> {
  await page.goto(`${app.url}/ui/login`);
  await page.fill('#key', key);
  await page.click('button[type=submit]');
  await page.waitForURL('**/ui/review');
}

async function shoot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize({ width: 360, height: 780 });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-360.png`), fullPage: true });
  // Usable at 360 px: nothing wider than the screen, so no sideways scrolling.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  if (overflow > 360) throw new Error(`${name}: the page is ${overflow} px wide at 360 px`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

browserTest('an auditor signs in, searches by agent run, opens the operation and sees its timeline, command and response; the duplicates report and the chain panel render', async (t) => {
  const { app, auditor, ids } = await seedIncident(t, 'sqlite');
  const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto(`${app.url}/ui/review`);
  t.true(page.url().endsWith('/ui/login'), 'without a session the console sends you to sign in');
  await signIn(page, app, auditor);
  await page.fill('#f-account_id', ACCOUNT);
  await page.fill('#f-agent_run_id', 'run-A');
  await page.click('form.search button[type=submit]');
  await page.waitForSelector('table.results');
  const keys = await page.locator('table.results tbody td[data-label=Key]').allTextContents();
  t.deepEqual(keys, ['A-2', 'A-1'], 'newest first');
  await shoot(page, 'review-search');
  const asJson = await page.getAttribute('a[href*="format=json"]', 'href');
  // The page's CSP forbids fetch from the page itself: follow the link with the session's cookie instead.
  const json = await (await context.request.get(`${app.url}${asJson}`)).json();
  t.deepEqual(json.items.map((o: { idempotency_key: string }) => o.idempotency_key), ['A-2', 'A-1'], 'the same data as JSON');

  await page.click(`a[href="/ui/review/operations/${ids['A-1']}"]`);
  await page.waitForSelector('#timeline');
  t.is(await page.textContent('#operation-id'), ids['A-1']);
  const types = await page.locator('#timeline td[data-label=Type]').allTextContents();
  t.deepEqual(types, ['attempted', 'sent', 'completed']);
  const hashes = await page.locator('#timeline td[data-label=Hash]').allTextContents();
  t.true(hashes.every((h) => /^[0-9a-f]{64}$/.test(h)), 'every event shows its hash');
  t.regex(await page.textContent('#command') ?? '', /"order_id": "ord_881"/);
  t.regex(await page.textContent('#response') ?? '', /"refund_id": "re_1"/);
  await shoot(page, 'review-operation');

  await page.goto(`${app.url}/ui/review/duplicates?account_id=${ACCOUNT}`);
  t.deepEqual(await page.locator('section.group td[data-label=Key]').allTextContents(), ['A-1', 'A-2']);
  t.deepEqual(await page.locator('section.group td[data-label=State]').allTextContents(), ['succeeded', 'succeeded']);
  await shoot(page, 'review-duplicates');

  await app.request('POST', '/v1/audit/checkpoints', { key: auditor, body: { account_id: ACCOUNT } });
  await page.goto(`${app.url}/ui/review/chain?account_id=${ACCOUNT}`);
  const size = Number(await page.textContent('#chain-size'));
  t.true(size > 10);
  t.regex(await page.textContent('#checkpoint-size') ?? '', new RegExp(`^${size} events`));
  t.regex(await page.textContent('#note') ?? '', new RegExp(`gatehouse/[0-9a-f]+/${ACCOUNT}\\n${size}\\n`));
  t.is(await page.textContent('#cosignatures'), 'none on this checkpoint');
  await shoot(page, 'review-chain');
});

browserTest('a <script> in a command stays text and a zero-width character is a visible marker on the operation page', async (t) => {
  const { app, auditor, gateway } = await seedIncident(t, 'sqlite');
  const sneaky = await claim(app, gateway, 'X-1', {
    method: 'POST', route: '/v1/payouts', agent_run_id: 'run-\u200Bevil',
    command: { iban: 'DE89\u200B3704', note: '<script>document.title="pwned";window.__pwned=1</script><img src=x onerror="window.__pwned=2">' },
  });
  const context = await browser().newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  await signIn(page, app, auditor);
  await page.goto(`${app.url}/ui/review/operations/${sneaky.body.operation.id}`);
  await assertCommandInert(t, page);
  t.is(await page.textContent('#agent-run'), 'run-⟨U+200B⟩evil');
  t.regex(await page.textContent('.notice') ?? '', /invisible or direction-changing/);
  // The search form keeps a pasted zero-width character in its value, not a marker that would break the input.
  await page.goto(`${app.url}/ui/review?account_id=${ACCOUNT}&agent_run_id=${encodeURIComponent('run-\u200Bevil')}`);
  t.is(await page.inputValue('#f-agent_run_id'), 'run-\u200Bevil');
  t.deepEqual(await page.locator('table.results td[data-label="Agent run"]').allTextContents(), ['run-⟨U+200B⟩evil']);
  await shoot(page, 'review-hidden-characters');
});

browserTest('a forged cross-site form post changes nothing: the auditor stays signed in', async (t) => {
  const { app, auditor } = await seedIncident(t, 'sqlite');
  // Another site (localhost is not 127.0.0.1) serving a form that posts to the console, no script needed.
  const evil = http.createServer((_, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<form method="post" action="${app.url}/ui/logout"><input name="csrf" value="guess"><button id="go">Win a prize</button></form>`);
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => evil.close(() => resolve())));
  const context = await browser().newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  await signIn(page, app, auditor);
  const sessionsBefore = await app.context.store.db.selectFrom('ui_sessions').selectAll().execute();
  await page.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
  const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/ui/logout')), page.click('#go')]);
  t.true([401, 403].includes(response.status()), `refused: ${response.status()}`);
  t.deepEqual(await app.context.store.db.selectFrom('ui_sessions').selectAll().execute(), sessionsBefore, 'the session is still there');
  await page.goto(`${app.url}/ui/review?account_id=${ACCOUNT}`);
  t.true(page.url().includes('/ui/review'), 'still signed in');
  t.is(await page.locator('table.results').count(), 1);
});

test('[sqlite] the console: auditors and admins only; approvers keep their approvals; gateways cannot sign in; an unknown operation is 404', async (t) => {
  const { app, auditor, gateway } = await seedIncident(t, 'sqlite');
  const signIn = async (key: string) => {
    const res = await fetch(`${app.url}/ui/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key }) });
    return { status: res.status, location: res.headers.get('location'), cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]! };
  };
  const get = async (cookie: string, route: string) => {
    const res = await fetch(`${app.url}${route}`, { redirect: 'manual', headers: { cookie, accept: 'text/html' } });
    return { status: res.status, text: await res.text(), csp: res.headers.get('content-security-policy') };
  };
  t.is((await signIn(gateway)).status, 401, 'a gateway key opens no page');
  const approver = await signIn(await app.keyFor(ACCOUNT, 'approver'));
  t.is(approver.location, '/ui/approvals');
  const asAuditor = await signIn(auditor);
  t.is(asAuditor.location, '/ui/review');
  const admin = await signIn(app.adminKey);
  t.is(admin.location, '/ui/approvals');
  const opId = (await app.request('GET', '/v1/operations?idempotency_key=A-1', { key: gateway })).body.items[0].id;
  const pages = ['/ui/review', `/ui/review?account_id=${ACCOUNT}`, `/ui/review/operations/${opId}`, `/ui/review/duplicates?account_id=${ACCOUNT}`, `/ui/review/chain?account_id=${ACCOUNT}`];
  for (const route of pages) {
    const refused = await get(approver.cookie, route);
    t.is(refused.status, 403, `approver: ${route}`);
    t.false(refused.text.includes('A-1'), 'nothing of the account leaks into the refusal');
    for (const who of [asAuditor, admin]) {
      const shown = await get(who.cookie, route);
      t.is(shown.status, 200, route);
      t.regex(shown.csp ?? '', /default-src 'none'/);
      t.false(/<script/i.test(shown.text), 'no scripts on any page');
    }
  }
  t.is((await get(asAuditor.cookie, '/ui/approvals')).status, 403, 'an auditor does not decide approvals');
  t.is((await get(asAuditor.cookie, '/ui/review/operations/op_doesnotexist')).status, 404);
  const json = await fetch(`${app.url}/ui/review/operations/${opId}?format=json`, { headers: { cookie: asAuditor.cookie } });
  const body = await json.json() as { operation: { id: string }; events: unknown[]; command: { order_id: string } };
  t.is(body.operation.id, opId);
  t.is(body.command.order_id, 'ord_881');
  // A chain page far into a long log: before_seq is any seq (it was refused past 9,999,999).
  const far = await fetch(`${app.url}/ui/review/chain?account_id=${ACCOUNT}&before_seq=10000000&format=json`, { headers: { cookie: asAuditor.cookie } });
  t.is(far.status, 200);
  t.true(((await far.json()) as { events: unknown[] }).events.length > 0, 'the newest events are before seq 10,000,000');
  t.is((await get(asAuditor.cookie, `/ui/review/chain?account_id=${ACCOUNT}&before_seq=0`)).status, 400);
  const bad = await get(asAuditor.cookie, `/ui/review?account_id=${ACCOUNT}&route=/v1/t*x`);
  t.is(bad.status, 400);
  t.regex(bad.text, /&quot;route&quot;/);
});
