import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { httpRequest } from '../helpers/app.js';
import { BIN, ROOT, runCli } from '../helpers/server-process.js';
import { writePolicyFile } from './policy-fixture.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
/** Points the verb at a data dir that does not exist: it must not need one. */
const noDataDir = { GATEHOUSE_DATA_DIR: path.join(os.tmpdir(), 'gatehouse-no-such-dir') };

test('gatehouse fingerprint prints the SHA-256 of the hand-written canonical JSON, without any data dir', async (t) => {
  const result = await runCli(
    ['fingerprint', '--account', 'acct_1', '--method', 'post', '--route', '/v1/payments', '--command', '{"to":"x","amount":100}'],
    { env: noDataDir },
  );
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, sha256('{"account_id":"acct_1","command":{"amount":100,"to":"x"},"method":"POST","route":"/v1/payments"}') + '\n');
  t.is(result.stderr, '');
  t.false(fs.existsSync(noDataDir.GATEHOUSE_DATA_DIR));
});

test('gatehouse fingerprint --json prints {"fingerprint"}, with the policy schema\'s defaults applied', async (t) => {
  const result = await runCli([
    'fingerprint', '--account', 'acct_1', '--method', 'POST', '--route', '/v1/tickets/t_1',
    '--command', '{"title":"Disk full"}', '--config', writePolicyFile(), '--json',
  ], { env: noDataDir });
  t.is(result.code, 0, result.stderr);
  t.deepEqual(JSON.parse(result.stdout), {
    fingerprint: sha256('{"account_id":"acct_1","command":{"priority":"normal","title":"Disk full"},"method":"POST","route":"/v1/tickets/t_1"}'),
  });
});

test('a command nested 64 deep is fingerprinted and one nested 65 deep is refused', async (t) => {
  const nest = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const args = (command: string) => ['fingerprint', '--account', 'a', '--method', 'POST', '--route', '/x', '--command', command];
  t.is((await runCli(args(nest(64)))).code, 0);
  const deep = await runCli(args(nest(65)));
  t.is(deep.code, 2);
  t.regex(deep.stderr, /^gatehouse: --command: Invalid JSON .*deeper than the limit of 64\n$/);
});

const badInputs: { name: string; extra: string[]; message: RegExp }[] = [
  { name: 'a command that is not JSON', extra: ['--route', '/v1/x', '--command', '{to: 1}'], message: /^gatehouse: --command: Invalid JSON at offset 1/ },
  { name: 'a command with a duplicate member', extra: ['--route', '/v1/x', '--command', '{"a":1,"a":2}'], message: /^gatehouse: --command: Duplicate member "a"/ },
  { name: 'an unsafe integer', extra: ['--route', '/v1/x', '--command', '{"a":9007199254740993}'], message: /^gatehouse: --command: Unsafe number 9007199254740993/ },
  { name: 'a route with a trailing slash', extra: ['--route', '/v1/x/', '--command', '{}'], message: /^gatehouse: route must not end with '\/'/ },
  { name: 'a command the policy schema refuses', extra: ['--route', '/v1/tickets/t_1', '--command', '{"priority":"urgent"}', '--config', writePolicyFile()], message: /^gatehouse: the command does not satisfy the policy schema for POST \/v1\/tickets\/\*: .* \(and 1 more\)$/ },
];

for (const { name, extra, message } of badInputs) {
  test(`gatehouse fingerprint with ${name} exits 2 with one line on stderr and no stack trace`, async (t) => {
    const result = await runCli(['fingerprint', '--account', 'acct_1', '--method', 'POST', ...extra], { env: noDataDir });
    t.is(result.code, 2);
    t.is(result.stdout, '');
    t.is(result.stderr.split('\n').length, 2, result.stderr);
    t.regex(result.stderr.trimEnd(), message);
  });
}

/** Starts the real `gatehouse serve`, resolving once it prints its URL (and first admin key). */
function startServe(t: { teardown(fn: () => void): void }, args: string[]): Promise<{ url: string; adminKey: string }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
      cwd: ROOT, env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(() => child.kill());
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdout!.on('data', (d) => {
      stdout += d;
      const url = /listening on (\S+)/.exec(stdout)?.[1];
      const adminKey = /admin key: (\S+)/.exec(stdout)?.[1];
      if (url && adminKey) resolve({ url, adminKey });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
}

test('the real `gatehouse serve --config` applies the file\'s schema, and agrees with `gatehouse fingerprint --config`', async (t) => {
  const file = writePolicyFile();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-serve-'));
  const { url, adminKey } = await startServe(t, ['--data-dir', dataDir, '--config', file]);
  const created = await httpRequest(url, 'POST', '/v1/principals', { key: adminKey, body: { account_id: 'acct_srv', roles: ['gateway'] } });
  t.is(created.status, 201);
  const body = { method: 'POST', route: '/v1/tickets/t_9', command: { title: 'Disk full' } };
  const served = await httpRequest(url, 'POST', '/v1/fingerprint', { key: created.body.key, body });
  const refused = await httpRequest(url, 'POST', '/v1/fingerprint', { key: created.body.key, body: { ...body, command: {} } });
  const cli = await runCli(['fingerprint', '--account', 'acct_srv', '--method', 'POST', '--route', body.route, '--command', JSON.stringify(body.command), '--config', file]);
  t.is(served.status, 200);
  t.is(cli.stdout, `${served.body.fingerprint}\n`);
  t.is(served.body.fingerprint, sha256('{"account_id":"acct_srv","command":{"priority":"normal","title":"Disk full"},"method":"POST","route":"/v1/tickets/t_9"}'));
  t.is(refused.status, 400);
  t.is(refused.body.error.code, 'command_invalid');
});
