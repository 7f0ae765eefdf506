import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Policies, PolicyConfigError } from '../../src/policies/policies.js';
import { BIN, ManagedProcess, runCli } from '../helpers/server-process.js';

function writeConfig(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-policies-'));
  const file = path.join(dir, 'policies.json');
  fs.writeFileSync(file, text);
  return file;
}

test('a bad policies file stops `gatehouse serve --config` with exit 2 and one line naming the file, line and problem', async (t) => {
  const file = writeConfig([
    '{',
    '  "policies": [',
    '    {"method": "POST", "route": "/v1/payments"},',
    '    {"method": "POST", "route": "/v1/deploys/*",',
    '     "aproval": {"approvers": 2}}',
    '  ]',
    '}',
  ].join('\n'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-serve-'));
  const result = await runCli(['serve', '--data-dir', dataDir, '--port', '0', '--config', file]);
  t.is(result.code, 2);
  t.is(result.stdout, '');
  t.is(result.stderr, `gatehouse: policies file ${file}, line 5, column 6: unknown member "aproval" in policies[1]; remove it or fix its spelling (allowed: method, route, schema, approval, business_key, exclusive_scope)\n`);
  t.deepEqual(fs.readdirSync(dataDir), [], 'the empty data dir was not initialised');
});

test('a policies file with a duplicate member stops `gatehouse serve` with exit 2, pointing at the second one', async (t) => {
  const file = writeConfig('{"policies": [\n  {"method": "POST",\n   "route": "/v1/a",\n   "route": "/v1/b"}\n]}');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-serve-'));
  const result = await runCli(['serve', '--data-dir', dataDir, '--port', '0', '--config', file]);
  t.is(result.code, 2);
  t.regex(result.stderr, /^gatehouse: policies file .*policies\.json, line 4, column 4: Duplicate member "route"/);
  t.notRegex(result.stderr, /\n\s+at /, 'no stack trace');
});

test('a missing policies file stops start-up with exit 2 and says which path it tried', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-serve-'));
  const missing = path.join(dataDir, 'nope.json');
  const result = await runCli(['serve', '--data-dir', dataDir, '--port', '0', '--config', missing]);
  t.is(result.code, 2);
  t.is(result.stderr, `gatehouse: policies file ${missing}: cannot read it (ENOENT); check the path given to --config\n`);
});

const shapeCases: { name: string; text: string; message: RegExp }[] = [
  { name: 'text that is not JSON', text: '{"policies": [\n  {"method": "POST", "route": "/x",}\n]}', message: /line 2, column 35: Invalid JSON .*trailing comma/ },
  { name: 'no policies member', text: '{\n  "polices": []\n}', message: /line 2, column 3: unknown member "polices" in the top level/ },
  { name: 'a policy without a route', text: '{"policies": [\n  {"method": "POST"}\n]}', message: /line 2, column 3: policies\[0\] lacks the required member "route"; add it/ },
  { name: 'approvers below 1', text: '{"policies": [\n  {"method": "POST", "route": "/x",\n   "approval": {"approvers": 0}}\n]}', message: /line 3, column 17: policies\[0\]\.approval\.approvers must be >= 1/ },
  { name: 'a ttl that is not an integer', text: '{"policies": [{"method": "POST", "route": "/x",\n "approval": {"ttl_seconds": 1.5}}]}', message: /line 2, column 15: policies\[0\]\.approval\.ttl_seconds must be integer/ },
  { name: 'a method that is not an HTTP token', text: '{"policies": [\n{"method": "PO ST", "route": "/x"}]}', message: /line 2, column 2: method must be an HTTP token/ },
  { name: 'a route pattern no request could match', text: '{"policies": [\n{"method": "POST", "route": "/x/"}]}', message: /line 2, column 20: "\/x\/" is not a valid route pattern: route must not end with '\/'/ },
  {
    name: 'a schema default its own schema refuses',
    text: '{"policies": [\n{"method": "POST", "route": "/bd",\n "schema": {"type": "object", "properties": {"x": {"type": "string", "default": 1}}}}]}',
    message: /line 3, column 2: the schema for POST \/bd is not a usable JSON Schema 2020-12: the default at \/properties\/x does not satisfy its own schema \(default must be string\)/,
  },
  {
    name: 'a default refused by the subschema it refers to',
    text: '{"policies": [\n{"method": "POST", "route": "/bd", "schema": {"type": "object", "$defs": {"env": {"enum": ["prod", "staging"]}},\n "properties": {"env": {"$ref": "#/$defs/env", "default": "dev"}}}}]}',
    message: /the default at \/properties\/env does not satisfy its own schema \(default must be equal to one of the allowed values\)/,
  },
  { name: 'a webhook url with a user name and password', text: '{"policies": [],\n "webhook": {"url": "http://user:hunter2-pw@127.0.0.1:18731/hook", "secret": "s"}}', message: /line 2, column 14: the webhook url has a user name or password in it/ },
  { name: 'a webhook url with a user name only', text: '{"policies": [],\n "webhook": {"url": "https://robot@hooks.example.com/gatehouse", "secret": "s"}}', message: /line 2, column 14: the webhook url has a user name or password in it/ },
  { name: 'a webhook url that is not http(s)', text: '{"policies": [],\n "webhook": {"url": "ftp://x", "secret": "s"}}', message: /line 2, column 14: the webhook url "ftp:\/\/x" is not an absolute http\(s\) URL/ },
];

for (const { name, text, message } of shapeCases) {
  test(`a policies file with ${name} is refused with its line and column`, (t) => {
    const file = writeConfig(text);
    const error = t.throws(() => Policies.fromFile(file), { instanceOf: PolicyConfigError });
    t.true(error!.message.startsWith(`policies file ${file}, line `), error!.message);
    t.regex(error!.message, message);
  });
}

test('a webhook url with a password stops `gatehouse serve` with exit 2 and one line naming the problem, and the password is not printed', async (t) => {
  const password = 'hunter2-pw';
  const file = writeConfig(`{"policies": [],\n "webhook": {"url": "http://user:${password}@127.0.0.1:18731/hook", "secret": "whsec_not_printed"}}`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-serve-'));
  // Before the fix it started (and tried to deliver for an hour): a start is a failure, not a hang.
  const serve = new ManagedProcess('gatehouse serve', [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--config', file], { env: { GATEHOUSE_LOG_LEVEL: 'info' } });
  t.teardown(() => serve.stop());
  if (await serve.waitFor(/listening on/).then(() => true, () => false)) {
    await serve.stop();
    t.fail(`serve started with a credentialed webhook url\n${serve.stderr}`);
    return;
  }
  const result = { code: (await serve.exited).code, stdout: serve.stdout, stderr: serve.stderr };
  t.is(result.code, 2);
  t.is(result.stdout, '');
  t.regex(result.stderr, /^gatehouse: policies file .*policies\.json, line 2, column 14: the webhook url has a user name or password in it[^\n]*\n$/);
  t.false(result.stderr.includes(password), result.stderr);
  t.false(result.stderr.includes('whsec_not_printed'), result.stderr);
  t.deepEqual(fs.readdirSync(dataDir), [], 'the empty data dir was not initialised');
});

test('a webhook url that is not http(s) is quoted without its password', (t) => {
  const file = writeConfig('{"policies": [],\n "webhook": {"url": "http://user:hunter2-pw@exa mple.com/hook", "secret": "s"}}');
  const error = t.throws(() => Policies.fromFile(file), { instanceOf: PolicyConfigError });
  t.regex(error!.message, /the webhook url "http:\/\/exa mple\.com\/hook" is not an absolute http\(s\) URL/);
  t.false(error!.message.includes('hunter2'), error!.message);
});

test('defaults their schemas accept load, nested and in arrays, and are applied', (t) => {
  const file = writeConfig(JSON.stringify({
    policies: [{
      method: 'POST', route: '/deploys',
      schema: {
        type: 'object', $defs: { env: { enum: ['prod', 'staging'] } },
        properties: {
          env: { $ref: '#/$defs/env', default: 'staging' },
          // A member named "default" is a name, not the keyword: its schema is not a default to check.
          options: { type: 'object', properties: { default: { type: 'boolean' }, retries: { type: 'integer', default: 3 } }, default: {} },
          steps: { type: 'array', items: { type: 'object', properties: { wait: { type: 'integer', minimum: 0, default: 0 } } } },
        },
      },
    }],
  }));
  const prepared = Policies.fromFile(file).match('POST', '/deploys').prepareCommand({ steps: [{}] });
  t.deepEqual(prepared, { env: 'staging', options: { retries: 3 }, steps: [{ wait: 0 }] });
});

test('a good file loads its policies and its webhook', (t) => {
  const file = writeConfig(JSON.stringify({
    policies: [{ method: 'POST', route: '/v1/refunds', approval: { approvers: 2, ttl_seconds: 60 } }],
    webhook: { url: 'https://hooks.example.com/gatehouse', secret: 'whsec_123' },
  }));
  const policies = Policies.fromFile(file);
  t.deepEqual(policies.webhook, { url: 'https://hooks.example.com/gatehouse', secret: 'whsec_123' });
  t.deepEqual(policies.match('POST', '/v1/refunds').approval, { approvers: 2, ttl_seconds: 60, request_ttl_seconds: 86_400 });
});
