import test from 'ava';
import http from 'node:http';
import net from 'node:net';
import { paymentsPolicy, startApprovalApp } from '../approvals/approval-app.js';
import { storeKinds } from '../helpers/stores.js';

/** POST /ui/login with the key, optionally with extra headers; answers status and headers. */
function signIn(baseUrl: string, key: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; html: string }> {
  const url = new URL('/ui/login', baseUrl);
  const body = new URLSearchParams({ key }).toString();
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), accept: 'text/html', ...headers },
    }, (res) => {
      let html = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (html += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, html }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A sign-in whose body never finishes: headers that promise 200 bytes, then 5 of them. Resolves
 * with whatever the server sent back when the connection ends (an answer, or nothing).
 */
function slowSignIn(baseUrl: string): { socket: net.Socket; answer: Promise<string> } {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.write(['POST /ui/login HTTP/1.1', `Host: ${url.host}`, 'Content-Type: application/x-www-form-urlencoded', 'Content-Length: 200', 'Accept: text/html', '', 'key=g'].join('\r\n'));
  let received = '';
  socket.on('data', (d) => (received += d.toString()));
  socket.on('error', () => undefined);
  return { socket, answer: new Promise((resolve) => socket.on('close', () => resolve(received))) };
}

for (const kind of await storeKinds()) {
  test(`[${kind}] five sign-ins whose bodies never arrive do not lock the approver at the same address out`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const slow = Array.from({ length: 5 }, () => slowSignIn(app.url));
    // Give the server every chance to have counted them, were it still counting before reading.
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    const approver = await signIn(app.url, app.approver);
    t.is(approver.status, 303, approver.html);
    t.is(approver.headers.location, '/ui/approvals');
    t.true(Date.now() - started < 5000, 'answered while the slow bodies are still held');
    // The trickled bodies are refused after the form's short deadline (5 s), with an answer.
    const answers = await Promise.all(slow.map((s) => s.answer));
    for (const answer of answers) t.regex(answer, /^HTTP\/1\.1 400 /);
    t.is(await app.context.store.db.selectFrom('ui_sessions').select('id_hash').execute().then((r) => r.length), 1);
  });
}

test('an unknown /ui path answers a 404 page with the pages\' security headers', async (t) => {
  const app = await startApprovalApp(t, 'sqlite', paymentsPolicy());
  for (const path of ['/ui/nowhere', '/ui/approvals/x/y/z']) {
    const res = await fetch(app.url + path, { headers: { accept: 'text/html' } });
    t.is(res.status, 404);
    t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
    t.regex(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    t.is(res.headers.get('x-frame-options'), 'DENY');
    t.regex(await res.text(), /not_found/);
  }
  const api = await fetch(app.url + '/nowhere');
  t.is(api.status, 404);
  t.regex(api.headers.get('content-type') ?? '', /application\/json/, 'the API keeps its JSON 404');
});

test('the session cookie is Secure when a trusted proxy says the client used https, and only then', async (t) => {
  const proxied = await startApprovalApp(t, 'sqlite', paymentsPolicy(), { trustedProxies: 1 });
  const viaTls = await signIn(proxied.url, proxied.approver, { 'x-forwarded-proto': 'https', 'x-forwarded-for': '192.0.2.7' });
  t.is(viaTls.status, 303);
  t.regex(String(viaTls.headers['set-cookie']), /gatehouse_ui=.*;\s*secure/i);
  const plain = await signIn(proxied.url, proxied.approver, { 'x-forwarded-for': '192.0.2.8' });
  t.notRegex(String(plain.headers['set-cookie']), /;\s*secure/i);
  const direct = await startApprovalApp(t, 'sqlite', paymentsPolicy());
  const forged = await signIn(direct.url, direct.approver, { 'x-forwarded-proto': 'https' });
  t.is(forged.status, 303);
  t.notRegex(String(forged.headers['set-cookie']), /;\s*secure/i, 'without --trusted-proxies the header is not believed');
});
