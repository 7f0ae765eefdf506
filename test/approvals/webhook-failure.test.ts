// What a failed delivery writes to the log (and to the outbox's last_error): why it failed, and
// never a secret: no password of the URL, no token of its query, not the signing secret.
import test from 'ava';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { ApprovalDeps } from '../../src/approvals/records.js';
import { postWebhook } from '../../src/approvals/webhook.js';
import { unreachableReason } from '../../src/approvals/webhook-failure.js';
import { freePort } from '../helpers/server-process.js';
import { newKey, payment, paymentsPolicy, startApprovalApp } from './approval-app.js';

const SECRET = 'whsec_never_logged';

test('a URL with credentials (refused at start since) fails its try without its password in the reason', async (t) => {
  const port = await freePort();
  const deps = { clock: { now: () => Date.now() } } as ApprovalDeps;
  const reason = await postWebhook(deps, { url: `http://user:hunter2-pw@127.0.0.1:${port}/hook?token=tok_q`, secret: SECRET }, '{}');
  t.is(reason, `unreachable: TypeError: Request cannot be constructed from a URL that includes credentials: http://127.0.0.1:${port}/hook`);
});

test('the reason tells the cause fetch hides, and takes out the URL\'s userinfo and query and the secret wherever a message quotes them', (t) => {
  const target = { url: 'https://bot:pw-1@hooks.example.com/gatehouse?token=tok_q', secret: SECRET };
  const quoting = new TypeError(`fetch failed at ${target.url} signed with ${SECRET}`, {
    cause: new Error('redirected to https://other:pw-2@elsewhere.example/x'),
  });
  t.is(unreachableReason(quoting, target),
    'unreachable: TypeError: fetch failed at https://hooks.example.com/gatehouse signed with [secret] (redirected to https://elsewhere.example/x)');
  const timedOut = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
  t.is(unreachableReason(timedOut, target), 'unreachable: TimeoutError: The operation was aborted due to timeout');
  t.is(unreachableReason(new TypeError('fetch failed', { cause: new Error('bad port') }), { url: 'https://hooks.example.com', secret: SECRET }),
    'unreachable: TypeError: fetch failed (bad port)');
});

test('[sqlite] each failed try is logged with its cause, and no line carries the secret or the URL\'s query', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
  const port = await freePort(); // nobody listens: connection refused
  const url = `http://127.0.0.1:${port}/hook?token=tok_never_logged`;
  const app = await startApprovalApp(t, 'sqlite', paymentsPolicy({ request_ttl_seconds: 1 }, { webhook: { url, secret: SECRET } }), { logger: pino({ level: 'info' }, sink) });
  app.context.approvals.webhook.backoffMs = [10, 50];
  t.is((await app.claim(newKey(), payment())).status, 202);
  await app.context.approvals.webhook.idle();
  const tries = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => String(line.msg).startsWith('approval webhook not delivered'));
  // Tried every 50 ms while the approval waited (1 s), then given up once with the reason.
  t.true(tries.length > 3, `${tries.length} tries`);
  t.deepEqual(tries.map((line) => line.msg), [
    ...Array(tries.length - 1).fill('approval webhook not delivered yet'),
    'approval webhook not delivered: gave up, the approval no longer waits for a decision',
  ]);
  t.deepEqual(tries.map((line) => line.attempt), tries.map((_, i) => i + 1));
  for (const line of tries) t.is(line.error, `unreachable: TypeError: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`);
  const all = lines.join('');
  t.false(all.includes(SECRET));
  t.false(all.includes('tok_never_logged'));
});
