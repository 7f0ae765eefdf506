import test from 'ava';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { storeKinds } from '../helpers/stores.js';
import { newKey, payment, paymentsPolicy, startApprovalApp } from './approval-app.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A chat tool's endpoint: answers the first `failures` deliveries with 500. */
async function receiver(t: { teardown(fn: () => void): void }, failures: number) {
  const received: Received[] = [];
  let waiting: (() => void) | null = null;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.statusCode = received.length <= failures ? 500 : 204;
      res.end();
      waiting?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    until: async (n: number) => {
      while (received.length < n) await new Promise<void>((resolve) => (waiting = resolve));
    },
  };
}

const SECRET = 'whsec_test_only';

for (const kind of await storeKinds()) {
  test(`[${kind}] an approval request is posted to the webhook after the claim commits, signed with HMAC-SHA256 over "t.body", and retried after a failure`, async (t) => {
    const hook = await receiver(t, 1);
    const app = await startApprovalApp(t, kind, paymentsPolicy({}, { webhook: { url: hook.url, secret: SECRET } }));
    app.context.approvals.webhook.backoffMs = [50, 100, 200, 400];
    const claim = await app.claim(newKey(), payment());
    t.is(claim.status, 202);
    await hook.until(2);
    const [failed, delivered] = hook.received;
    t.is(failed!.body, delivered!.body, 'a retry sends the same body');
    const body = JSON.parse(delivered!.body);
    t.deepEqual(body, {
      type: 'approval_requested', approval_id: claim.body.approval.id, operation_id: claim.body.operation.id, account_id: 'acme',
      summary: payment().summary, expires_at: claim.body.approval.expires_at, url: `${app.url}/ui/approvals/${claim.body.approval.id}`,
    });
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(delivered!.headers['gatehouse-signature']));
    t.truthy(match);
    const expected = crypto.createHmac('sha256', SECRET).update(`${match![1]}.${delivered!.body}`).digest('hex');
    t.is(match![2], expected);
    t.true(Math.abs(Number(match![1]) - Date.now() / 1000) < 60);
    t.is(delivered!.headers['content-type'], 'application/json');
  });

  test(`[${kind}] a webhook that does not answer neither blocks nor fails the claim; delivery is tried past its backoff list while the approval waits, and given up once it expired`, async (t) => {
    // The endpoint holds every request open until released: a claim that waited for delivery would never answer.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let tries = 0;
    const server = http.createServer((req, res) => {
      tries++;
      req.resume();
      void released.then(() => {
        res.statusCode = 500;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const app = await startApprovalApp(t, kind, paymentsPolicy({ request_ttl_seconds: 2 }, { webhook: { url, secret: SECRET } }));
    app.context.approvals.webhook.backoffMs = [10, 20, 40, 80];
    const claim = await app.claim(newKey(), payment());
    t.is(claim.status, 202, claim.text);
    t.deepEqual(await app.eventTypes(), ['attempted', 'approval_requested']);
    release();
    await app.context.approvals.webhook.idle();
    const expiresAt = Date.parse(claim.body.approval.expires_at);
    t.true(Date.now() >= expiresAt, 'given up only once the approval expired');
    // Five tries take the list to its end (~150 ms); every 80 ms after that for the rest of the approval's 2 s.
    t.true(tries > 10, `tried ${tries} times`);
    const given = tries;
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.is(tries, given, 'no try after giving up');
  });
}
