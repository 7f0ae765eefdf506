import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startTestApp } from '../helpers/app.js';
import { ACCOUNT, paymentsPolicy, startApprovalApp, TestClock, type ApprovalApp } from '../approvals/approval-app.js';
import { storeKinds, type StoreKind } from '../helpers/stores.js';

interface SignInResponse {
  status: number;
  retryAfter: string | undefined;
  location: string | undefined;
  html: string;
}

/**
 * POST /ui/login as a browser would, from a chosen loopback address: Linux routes all of
 * 127.0.0.0/8 to lo, so 127.0.0.2 is "another client" to the server on 127.0.0.1.
 */
function signIn(baseUrl: string, key: string, from = '127.0.0.1', forwardedFor?: string): Promise<SignInResponse> {
  const url = new URL('/ui/login', baseUrl);
  const body = new URLSearchParams({ key }).toString();
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress: from, agent: false,
      headers: {
        'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), accept: 'text/html',
        ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
      },
    }, (res) => {
      let html = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (html += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], location: res.headers.location, html }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const wrongKey = (i: number) => `gh_${String(i).padStart(43, 'x')}`;

async function lockOut(t: ExecutionContext, app: ApprovalApp, from = '127.0.0.1', forwardedFor?: (i: number) => string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    t.is((await signIn(app.url, wrongKey(i), from, forwardedFor?.(i))).status, 401, `wrong key ${i} is refused as wrong, not yet throttled`);
  }
}

/** Stops the app's clock (tests still move it with `advance`), so the seconds a lock has left are exact. */
async function startFrozenApp(t: ExecutionContext, kind: StoreKind, options: { trustedProxies?: number } = {}): Promise<ApprovalApp> {
  const app = await startApprovalApp(t, kind, paymentsPolicy(), options);
  const frozenAt = Date.now();
  app.clock.now = () => frozenAt + app.clock.offsetMs;
  return app;
}

const sessionCount = async (app: ApprovalApp) => (await app.context.store.db.selectFrom('ui_sessions').select('id_hash').execute()).length;

for (const kind of await storeKinds()) {
  test(`[${kind}] after five wrong keys the sixth sign-in answers 429 with Retry-After and a page that names no key`, async (t) => {
    const app = await startFrozenApp(t, kind);
    await lockOut(t, app);
    const refused = await signIn(app.url, wrongKey(5));
    t.is(refused.status, 429);
    t.is(refused.retryAfter, '60');
    t.regex(refused.html, /Too many failed sign-in attempts from your network address\. Try again in 1 min\./);
    t.regex(refused.html, /<form method="post" action="\/ui\/login">/, 'rendered on the sign-in page, like its other refusals');
    t.false(refused.html.includes(wrongKey(5)), 'the key sent is not echoed');
    t.false(refused.html.includes('unknown, revoked'), 'and nothing says whether it exists');
  });

  test(`[${kind}] while an address is locked out even the right approver key is refused, with the same page, and no session is made`, async (t) => {
    const app = await startFrozenApp(t, kind);
    await lockOut(t, app);
    const wrong = await signIn(app.url, wrongKey(99));
    const right = await signIn(app.url, app.approver);
    t.is(right.status, 429);
    t.is(right.location, undefined);
    t.is(right.html, wrong.html, 'the answer does not depend on the key: a locked-out client cannot probe');
    t.is(await sessionCount(app), 0);
  });

  test(`[${kind}] once the clock passes the lock the right key signs in, and the next lock in a row is twice as long`, async (t) => {
    const app = await startFrozenApp(t, kind);
    await lockOut(t, app);
    app.clock.advance(59);
    t.is((await signIn(app.url, app.approver)).status, 429, 'one second before the end it still holds');
    app.clock.advance(1);
    const signedIn = await signIn(app.url, app.approver);
    t.is(signedIn.status, 303);
    t.is(signedIn.location, '/ui/approvals');
    t.is(await sessionCount(app), 1);
    await lockOut(t, app);
    t.is((await signIn(app.url, app.approver)).retryAfter, '120');
  });

  test(`[${kind}] an approver on another address signs in while one address is locked out`, async (t) => {
    const app = await startFrozenApp(t, kind);
    await lockOut(t, app, '127.0.0.2');
    t.is((await signIn(app.url, app.approver, '127.0.0.2')).status, 429);
    const elsewhere = await signIn(app.url, app.approver, '127.0.0.3');
    t.is(elsewhere.status, 303);
    t.is((await signIn(app.url, wrongKey(0), '127.0.0.3')).status, 401, 'its own failures start from zero');
  });

  test(`[${kind}] behind one trusted proxy the address it saw is the client: one client is locked out, another behind the same proxy signs in`, async (t) => {
    const app = await startFrozenApp(t, kind, { trustedProxies: 1 });
    await lockOut(t, app, '127.0.0.1', () => '203.0.113.7');
    t.is((await signIn(app.url, app.approver, '127.0.0.1', '203.0.113.7')).status, 429);
    const neighbour = await signIn(app.url, app.approver, '127.0.0.1', '198.51.100.9');
    t.is(neighbour.status, 303, 'the proxy\'s own address is not what is locked out');
  });

  test(`[${kind}] behind one trusted proxy, entries the client wrote to the left of the proxy's do not dodge the lock`, async (t) => {
    const app = await startFrozenApp(t, kind, { trustedProxies: 1 });
    await lockOut(t, app, '127.0.0.1', (i) => `10.9.9.${i}, 203.0.113.7`);
    t.is((await signIn(app.url, app.approver, '127.0.0.1', '10.1.1.1, 203.0.113.7')).status, 429);
  });

  test(`[${kind}] without trusted proxies X-Forwarded-For is ignored: changing it does not dodge the lock`, async (t) => {
    const app = await startFrozenApp(t, kind);
    await lockOut(t, app, '127.0.0.1', (i) => `203.0.113.${i}`);
    t.is((await signIn(app.url, app.approver, '127.0.0.1', '198.51.100.9')).status, 429);
  });

  test(`[${kind}] successful sign-ins are not counted: ten in a row, then four typos, then one more all pass`, async (t) => {
    const app = await startFrozenApp(t, kind);
    for (let i = 0; i < 10; i++) t.is((await signIn(app.url, app.approver)).status, 303);
    for (let i = 0; i < 4; i++) t.is((await signIn(app.url, wrongKey(i))).status, 401);
    t.is((await signIn(app.url, app.approver)).status, 303);
    t.is(await sessionCount(app), 11);
  });

  test(`[${kind}] a valid key without the approver role counts as a failed sign-in`, async (t) => {
    const app = await startFrozenApp(t, kind);
    for (let i = 0; i < 5; i++) t.is((await signIn(app.url, app.gateway)).status, 401);
    t.is((await signIn(app.url, app.gateway)).status, 429);
  });
}

// Logging is about the route, not the store: SQLite is enough here.
test('[sqlite] a lockout is logged once, with the address and never with a key that was tried', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
  const { context, server } = await startTestApp(t, 'sqlite', { clock: new TestClock(), logger: pino({ level: 'info' }, sink) });
  const approver = (await context.principals.create({ account_id: ACCOUNT, roles: ['approver'] })).key;
  const tried = [wrongKey(1), wrongKey(2), wrongKey(3), wrongKey(4), approver.slice(0, -1) + (approver.endsWith('A') ? 'B' : 'A'), approver];
  for (const key of tried) await signIn(server.url, key);
  const lockouts = lines.filter((line) => line.includes('locked out'));
  t.is(lockouts.length, 1, lines.join(''));
  t.like(JSON.parse(lockouts[0]!), { client: '127.0.0.1', locked_for_seconds: 60 });
  for (const key of tried) t.false(lines.join('').includes(key.slice(3)), 'no key that was tried reaches the log');
});
