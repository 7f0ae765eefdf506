import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';

/**
 * docs/http-api.md (Conventions): every refusal of a query parameter is `400 invalid_request`
 * naming it in the message ("the query parameter …") and in `error.parameter` — the missing
 * and malformed account ids of the audit and proof routes, the proof routes' missing and
 * out-of-range numbers, and the cursors and account ids of the lists included. A body member
 * keeps being named as a member, with no `parameter`.
 */

const ACCOUNT = 'acme';

async function withEvents(app: TestApp, n: number): Promise<void> {
  const { ledger, store } = app.context;
  await store.transact(async (trx) => {
    for (let i = 0; i < n; i++) await ledger.append(trx, { account_id: ACCOUNT, type: 'attempted', actor: 'prn_t', payload: { i } });
  });
}

const inclusion = (query: string) => `/v1/audit/proofs/inclusion?${query}`;
const consistency = (query: string) => `/v1/audit/proofs/consistency?${query}`;

/** [path, the parameter it must name, what the message says about it] */
const AUDITOR_CASES: Array<[string, string, RegExp]> = [
  ['/v1/audit/events', 'account_id', /^the query parameter "account_id" is required$/],
  ['/v1/audit/events?account_id=no%20such', 'account_id', /^the query parameter "account_id" must be 1-64 characters/],
  ['/v1/audit/events?account_id=a&account_id=b', 'account_id', /^the query parameter "account_id" must be given once/],
  ['/v1/audit/checkpoints/latest', 'account_id', /^the query parameter "account_id" is required$/],
  ['/v1/audit/checkpoints', 'account_id', /^the query parameter "account_id" is required$/],
  ['/v1/audit/checkpoints?account_id=-x', 'account_id', /^the query parameter "account_id" must be 1-64 characters/],
  // One position under two names: whichever were read, the other would be silently ignored.
  [`/v1/audit/events?account_id=${ACCOUNT}&after_seq=1&cursor=3`, 'cursor', /^the query parameter "cursor" and after_seq name different positions/],
  [`/v1/audit/checkpoints?account_id=${ACCOUNT}&cursor=2&after_size=0`, 'cursor', /^the query parameter "cursor" and after_size name different positions/],
  ['/v1/audit/export?account_id=a%2Fb', 'account_id', /^the query parameter "account_id" must be 1-64 characters/],
  [inclusion(`account_id=${ACCOUNT}&seq=6&tree_size=5`), 'seq', /^the query parameter "seq" must be within 1\.\.5 \(tree_size\), not 6$/],
  [inclusion(`account_id=${ACCOUNT}&seq=0&tree_size=3`), 'seq', /^the query parameter "seq" must be within 1\.\.3/],
  [inclusion(`account_id=${ACCOUNT}&seq=1&tree_size=6`), 'tree_size', /^the query parameter "tree_size" must be within 1\.\.5, the events of account acme, not 6$/],
  [inclusion(`account_id=${ACCOUNT}&seq=1&tree_size=0`), 'tree_size', /^the query parameter "tree_size" must be within 1\.\.5/],
  [inclusion(`account_id=other&seq=1&tree_size=1`), 'tree_size', /^the query parameter "tree_size" must be within 1\.\.0/],
  [inclusion(`account_id=${ACCOUNT}&seq=1`), 'tree_size', /^the query parameter "tree_size" is required$/],
  [inclusion(`account_id=${ACCOUNT}&tree_size=1`), 'seq', /^the query parameter "seq" is required$/],
  [inclusion('seq=1&tree_size=1'), 'account_id', /^the query parameter "account_id" is required$/],
  [consistency(`account_id=${ACCOUNT}&from=2&to=6`), 'to', /^the query parameter "to" must be at most 5, the events of account acme, not 6$/],
  [consistency(`account_id=${ACCOUNT}&from=4&to=3`), 'from', /^the query parameter "from" must be at most to \(3\), not 4$/],
  [consistency(`account_id=${ACCOUNT}&from=-1&to=3`), 'from', /^the query parameter "from" must be an integer/],
  [consistency(`account_id=${ACCOUNT}&to=3`), 'from', /^the query parameter "from" is required$/],
  [consistency(`account_id=${ACCOUNT}&from=1`), 'to', /^the query parameter "to" is required$/],
  [consistency('from=0&to=0'), 'account_id', /^the query parameter "account_id" is required$/],
  ['/v1/operations', 'account_id', /^the query parameter "account_id" is required/],
  ['/v1/operations?account_id=no%20such', 'account_id', /^the query parameter "account_id" must be 1-64 characters/],
  ['/v1/review/duplicates?account_id=no%20such', 'account_id', /^the query parameter "account_id" must be 1-64 characters/],
];

for (const kind of await storeKinds()) {
  test(`[${kind}] every refusal of a query parameter names it in error.parameter and says "the query parameter"`, async (t) => {
    const app = await startTestApp(t, kind);
    await withEvents(app, 5);
    const auditor = await app.keyFor('audit', 'auditor');
    const check = async (key: string, path: string, parameter: string, message: RegExp) => {
      const res = await app.request('GET', path, { key });
      t.is(res.status, 400, `${path}: ${res.text}`);
      t.is(res.body.error.code, 'invalid_request', path);
      t.is(res.body.error.parameter, parameter, `${path}: ${res.text}`);
      t.regex(res.body.error.message, message, path);
    };
    for (const [path, parameter, message] of AUDITOR_CASES) await check(auditor, path, parameter, message);
    await check(app.adminKey, '/v1/approvals?cursor=bm90IGEgY3Vyc29y', 'cursor', /^the query parameter "cursor" is not a cursor this server gave out$/);
    await check(await app.keyFor(ACCOUNT, 'approver'), '/v1/approvals?cursor=W10', 'cursor', /^the query parameter "cursor"/);
    // An account id no account can have is refused, not answered with an empty page.
    await check(app.adminKey, '/v1/approvals?account_id=no%20such', 'account_id', /^the query parameter "account_id" must be 1-64 characters/);
    // Still answered when right.
    t.is((await app.request('GET', `/v1/audit/events?account_id=${ACCOUNT}&after_seq=3&cursor=3`, { key: auditor })).body.items.length, 2);
    t.is((await app.request('GET', inclusion(`account_id=${ACCOUNT}&seq=5&tree_size=5`), { key: auditor })).status, 200);
    t.is((await app.request('GET', consistency(`account_id=${ACCOUNT}&from=0&to=5`), { key: auditor })).status, 200);
  });

  test(`[${kind}] an account id in a body member is still named as the member, with no parameter`, async (t) => {
    const app = await startTestApp(t, kind);
    const auditor = await app.keyFor('audit', 'auditor');
    const bodies: Array<[string, string, object]> = [
      ['/v1/audit/checkpoints', auditor, { account_id: 'no such' }],
      ['/v1/principals', app.adminKey, { account_id: 'no such', roles: ['gateway'] }],
    ];
    for (const [path, key, body] of bodies) {
      const res = await app.request('POST', path, { key, body });
      t.is(res.status, 400, `${path}: ${res.text}`);
      t.is(res.body.error.code, 'invalid_request');
      t.regex(res.body.error.message, /the member "account_id"/, path);
      t.is(res.body.error.parameter, undefined, path);
    }
  });
}

test('[sqlite] the review console\'s chain page as JSON names the query parameter too', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const auditor = await app.keyFor('audit', 'auditor');
  const login = await fetch(`${app.url}/ui/login`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key: auditor }),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  for (const [query, message] of [['', /^the query parameter "account_id" is required$/], ['account_id=no%20such&', /^the query parameter "account_id" must be 1-64 characters/]] as const) {
    const res = await fetch(`${app.url}/ui/review/chain?${query}format=json`, { headers: { cookie } });
    t.is(res.status, 400, query);
    const body = await res.json() as { error: { code: string; message: string; parameter?: string } };
    t.is(body.error.parameter, 'account_id', query);
    t.regex(body.error.message, message, query);
  }
});
