import test from 'ava';
import { createHash } from 'node:crypto';
import { Policies } from '../../src/policies/policies.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';
import { storeKinds } from '../helpers/stores.js';
import { writePolicyFile } from './policy-fixture.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The app as `serve --config FILE` builds it: the file loaded once into the context. */
async function appWithPolicies(t: Parameters<typeof startTestApp>[0], kind: Parameters<typeof startTestApp>[1]): Promise<TestApp> {
  const app = await startTestApp(t, kind);
  app.context.policies = Policies.fromFile(writePolicyFile());
  return app;
}

async function eventCount(app: TestApp): Promise<number> {
  const row = await app.context.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const kind of await storeKinds()) {
  test(`[${kind}] the fingerprint is SHA-256 of the hand-written canonical JSON, for the caller's account`, async (t) => {
    const app = await startTestApp(t, kind);
    const key = await app.keyFor('acct_fp', 'gateway');
    const response = await app.request('POST', '/v1/fingerprint', {
      key,
      rawBody: '{"route": "/v1/payments", "method": "post", "command": {"to": "x", "amount": 100, "note": "caf\\u00e9", "rate": 4.50}}',
    });
    t.is(response.status, 200);
    t.deepEqual(response.body, {
      fingerprint: sha256('{"account_id":"acct_fp","command":{"amount":100,"note":"café","rate":4.5,"to":"x"},"method":"POST","route":"/v1/payments"}'),
    });
  });

  test(`[${kind}] any role may ask, and each caller gets its own account's fingerprint`, async (t) => {
    const app = await startTestApp(t, kind);
    const body = { method: 'POST', route: '/v1/x', command: null };
    for (const [account, role] of [['acct_a', 'approver'], ['acct_b', 'auditor']] as const) {
      const response = await app.request('POST', '/v1/fingerprint', { key: await app.keyFor(account, role), body });
      t.is(response.status, 200);
      t.is(response.body.fingerprint, sha256(`{"account_id":"${account}","command":null,"method":"POST","route":"/v1/x"}`));
    }
    t.is((await app.request('POST', '/v1/fingerprint', { body })).status, 401);
  });

  test(`[${kind}] with a policy schema, a command without the defaulted member and one that spells it out get one fingerprint`, async (t) => {
    const app = await appWithPolicies(t, kind);
    const key = await app.keyFor('acct_fp', 'gateway');
    const ask = (command: unknown) => app.request('POST', '/v1/fingerprint', { key, body: { method: 'POST', route: '/v1/tickets/t_1', command } });
    const implicit = await ask({ title: 'Disk full' });
    const explicit = await ask({ priority: 'normal', title: 'Disk full' });
    const other = await ask({ priority: 'high', title: 'Disk full' });
    t.is(implicit.status, 200);
    t.is(implicit.body.fingerprint, explicit.body.fingerprint);
    t.is(implicit.body.fingerprint, sha256('{"account_id":"acct_fp","command":{"priority":"normal","title":"Disk full"},"method":"POST","route":"/v1/tickets/t_1"}'));
    t.not(other.body.fingerprint, implicit.body.fingerprint);
  });

  test(`[${kind}] a command the policy schema refuses answers 400 command_invalid with the schema errors`, async (t) => {
    const app = await appWithPolicies(t, kind);
    const key = await app.keyFor('acct_fp', 'gateway');
    const response = await app.request('POST', '/v1/fingerprint', {
      key, body: { method: 'POST', route: '/v1/tickets/t_1', command: { priority: 'urgent', colour: 'red' } },
    });
    t.is(response.status, 400);
    t.is(response.body.error.code, 'command_invalid');
    t.deepEqual(
      response.body.error.errors.map((e: { path: string }) => e.path).sort(),
      ['/colour', '/priority', '/title'],
    );
    t.regex(response.body.error.message, /policy schema for POST \/v1\/tickets\/\*/);
  });

  test(`[${kind}] bad method, route or missing command are 400s naming what is wrong, and nothing is recorded`, async (t) => {
    const app = await startTestApp(t, kind);
    const key = await app.keyFor('acct_fp', 'gateway');
    const before = await eventCount(app);
    const cases: [unknown, string, RegExp][] = [
      [{ method: 'POST', route: '/v1/x/', command: {} }, 'invalid_route', /must not end with '\/'/],
      [{ method: 'POST', route: '/v1/%41', command: {} }, 'invalid_route', /unreserved character 'A'/],
      [{ method: 'POST', route: '/v1/x?y=1', command: {} }, 'invalid_route', /query string/],
      [{ method: 'GE T', route: '/v1/x', command: {} }, 'invalid_request', /method must be an HTTP token/],
      [{ method: 'POST', route: '/v1/x' }, 'invalid_request', /"command" is required/],
      [{ method: 'POST', command: 1 }, 'invalid_request', /"route" is required/],
      [[], 'invalid_request', /body/],
    ];
    for (const [body, code, message] of cases) {
      const response = await app.request('POST', '/v1/fingerprint', { key, body });
      t.is(response.status, 400, JSON.stringify(body));
      t.is(response.body.error.code, code, JSON.stringify(body));
      t.regex(response.body.error.message, message);
    }
    const duplicate = await app.request('POST', '/v1/fingerprint', { key, rawBody: '{"method":"POST","route":"/x","command":{"a":1,"a":2}}' });
    t.is(duplicate.body.error.code, 'duplicate_member');
    const ok = await app.request('POST', '/v1/fingerprint', { key, body: { method: 'POST', route: '/v1/x', command: {} } });
    t.is(ok.status, 200);
    t.is(await eventCount(app), before);
  });
}

// The CLI needs no store, so one store kind is enough for the comparison.
test('gatehouse fingerprint prints what POST /v1/fingerprint answers, with and without a policy schema', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const key = await app.keyFor('acct_cli', 'gateway');
  const file = writePolicyFile();
  const cases = [
    { route: '/v1/payments', command: '{"amount": 1E3, "currency": "EUR", "to": "acct_9"}', config: undefined },
    { route: '/v1/tickets/t_7', command: '{"title": "Disk full"}', config: file },
  ];
  for (const { route, command, config } of cases) {
    app.context.policies = config ? Policies.fromFile(config) : Policies.none();
    const http = await app.request('POST', '/v1/fingerprint', { key, rawBody: `{"method": "post", "route": "${route}", "command": ${command}}` });
    const cli = await runCli(['fingerprint', '--account', 'acct_cli', '--method', 'post', '--route', route, '--command', command, ...(config ? ['--config', config] : [])]);
    t.is(http.status, 200);
    t.is(cli.code, 0, cli.stderr);
    t.is(cli.stdout, `${http.body.fingerprint}\n`);
  }
});
