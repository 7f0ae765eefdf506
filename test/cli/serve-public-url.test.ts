// `serve --public-url`: the base of the approver-page link an approval webhook carries. Without
// it the link is where the service listens, which opens nowhere when that is every address.
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { addPrincipalWith, spawnGatehouse, tempDir } from '../helpers/server-process.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/** A data dir and a policies file whose POST /payments needs approval, with its webhook posted to `hookUrl`. */
function deployment(t: { teardown(fn: () => void): void }, hookUrl: string): { dataDir: string; args: string[] } {
  const { dir, cleanup } = tempDir('gatehouse-public-url-');
  t.teardown(cleanup);
  const dataDir = path.join(dir, 'data');
  const policies = path.join(dir, 'policies.json');
  fs.writeFileSync(policies, JSON.stringify({
    policies: [{ method: 'POST', route: '/payments', approval: { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 3600 } }],
    webhook: { url: hookUrl, secret: 'whsec_public_url' },
  }));
  return { dataDir, args: ['--data-dir', dataDir, '--config', policies] };
}

async function requestApproval(baseUrl: string, gatewayKey: string): Promise<string> {
  const claim = await fetch(`${baseUrl}/v1/operations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gatewayKey}`, 'idempotency-key': 'public-url-1', 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'POST', route: '/payments', command: { amount: 4200 } }),
  });
  if (claim.status !== 202) throw new Error(`claim answered ${claim.status}: ${await claim.text()}`);
  return ((await claim.json()) as { approval: { id: string } }).approval.id;
}

const WARNING = /^gatehouse: warning: webhook links to the approver pages will point to http:\/\/0\.0\.0\.0:\d+, .*give --public-url/m;

test('serve --public-url: the webhook\'s url is the approver page under that URL, not the address it listens on', async (t) => {
  const hook = await startReceiver();
  t.teardown(() => hook.close());
  const { dataDir, args } = deployment(t, hook.url);
  const serve = await spawnGatehouse({ args: [...args, '--public-url', 'https://gh.example.com/'] });
  t.teardown(() => serve.stop());
  const gateway = await addPrincipalWith(['--data-dir', dataDir], 'acme', ['gateway']);
  const approvalId = await requestApproval(serve.url, gateway);
  await hook.until(1);
  const body = JSON.parse(hook.received[0]!.body) as { url: string };
  t.is(body.url, `https://gh.example.com/ui/approvals/${approvalId}`, 'the trailing / of the flag is not doubled');
  t.notRegex(serve.process.stderr, WARNING);
});

test('serve on every address with a webhook and no --public-url warns once at start, naming --public-url; with it, it does not', async (t) => {
  const hook = await startReceiver();
  t.teardown(() => hook.close());
  const { args } = deployment(t, hook.url);
  const unset = await spawnGatehouse({ host: '0.0.0.0', args, name: 'gatehouse serve --host 0.0.0.0' });
  t.teardown(() => unset.stop());
  await unset.process.waitFor(WARNING, 10_000, 'stderr');
  await unset.stop();
  t.is(unset.process.stderr.split('\n').filter((line) => line.startsWith('gatehouse: warning:')).length, 1, unset.process.stderr);

  const set = await spawnGatehouse({ host: '0.0.0.0', args: [...args, '--public-url', 'https://gh.example.com'], name: 'gatehouse serve --host 0.0.0.0 --public-url' });
  t.teardown(() => set.stop());
  await set.stop();
  t.notRegex(set.process.stderr, /gatehouse: warning/);
});
