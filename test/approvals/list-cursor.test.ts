import test from 'ava';
import { storeKinds } from '../helpers/stores.js';
import type { TestResponse } from '../helpers/app.js';
import { ACCOUNT, newKey, payment, paymentsPolicy, startApprovalApp, type ApprovalApp } from './approval-app.js';

/**
 * docs/http-api.md (Conventions, Lists): the cursor of `GET /v1/approvals` carries the account
 * and the state filter with its position, like every list's. Continued under another filter or
 * another account it would skip that question's rows without a word, so it is refused.
 */

const OTHER = 'other';

async function seed(app: ApprovalApp) {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const claim = await app.claim(newKey(), payment(100 + i));
    ids.push(claim.body.approval.id);
    app.clock.advance(0.01);
  }
  // The first is approved: the pending list starts at the second.
  const first = await app.request('GET', `/v1/approvals/${ids[0]}`, { key: app.approver });
  const decided = await app.decide(ids[0]!, 'approve', first.body.approval.fingerprint);
  if (decided.status !== 200) throw new Error(`the approval was not decided: ${decided.text}`);
  const otherGateway = await app.keyFor(OTHER, 'gateway');
  for (let i = 0; i < 2; i++) await app.claim(newKey(), payment(200 + i), otherGateway);
  return ids;
}

const idsOf = (res: TestResponse) => res.body.items.map((a: { id: string }) => a.id);

function refusesCursor(t: import('ava').ExecutionContext, res: TestResponse, message: RegExp, what: string): void {
  t.is(res.status, 400, `${what}: ${res.text}`);
  t.is(res.body.error.code, 'invalid_request', what);
  t.is(res.body.error.parameter, 'cursor', what);
  t.regex(res.body.error.message, message, what);
}

for (const kind of await storeKinds()) {
  test(`[${kind}] an approvals cursor continues its own filter and account only`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    const ids = await seed(app);
    const get = (query: string, key = app.approver) => app.request('GET', `/v1/approvals?${query}`, { key });

    const pending = await get('state=pending&limit=1');
    t.deepEqual(idsOf(pending), [ids[1]]);
    const cursor = encodeURIComponent(pending.body.next_cursor);
    // The cursor alone, or with its filter repeated, continues the pending list.
    t.deepEqual(idsOf(await get(`cursor=${cursor}`)), [ids[2]], 'the cursor carries state=pending');
    t.deepEqual(idsOf(await get(`state=pending&limit=5&cursor=${cursor}`)), [ids[2]]);
    // Under another filter it is refused, not read from the middle of another list.
    refusesCursor(t, await get(`state=approved&cursor=${cursor}`), /^the query parameter "cursor" was made for other filters \(state differs\)/, 'pending → approved');
    const all = await get('limit=1');
    refusesCursor(t, await get(`state=pending&cursor=${encodeURIComponent(all.body.next_cursor)}`), /state differs/, 'all → pending');

    // An admin's cursor carries the account it named (or every account).
    const acme = await get(`account_id=${ACCOUNT}&limit=1`, app.adminKey);
    const acmeCursor = encodeURIComponent(acme.body.next_cursor);
    refusesCursor(t, await get(`account_id=${OTHER}&cursor=${acmeCursor}`, app.adminKey), /another account_id/, 'acme → other');
    t.deepEqual(idsOf(await get(`cursor=${acmeCursor}`, app.adminKey)), ids.slice(1), 'the cursor alone stays in acme');
    t.is((await get(`cursor=${acmeCursor}`)).status, 200, 'an approver of acme may continue an acme list');
    refusesCursor(t, await get(`cursor=${acmeCursor}`, await app.keyFor(OTHER, 'approver')), /another account_id/, 'another account\'s approver');
    const everyAccount = await get('limit=1', app.adminKey);
    refusesCursor(t, await get(`account_id=${ACCOUNT}&cursor=${encodeURIComponent(everyAccount.body.next_cursor)}`, app.adminKey), /another account_id/, 'every account → acme');
    t.is((await get(`cursor=${encodeURIComponent(everyAccount.body.next_cursor)}`, app.adminKey)).body.items.length, 4, 'the rest of every account');
  });

  test(`[${kind}] a cursor of another list, or one forged, is not an approvals cursor`, async (t) => {
    const app = await startApprovalApp(t, kind, paymentsPolicy());
    await seed(app);
    const operations = await app.request('GET', '/v1/operations?limit=1', { key: app.gateway });
    t.truthy(operations.body.next_cursor);
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const at = '2025-03-01T00:00:00.000Z';
    for (const [cursor, what] of [
      [operations.body.next_cursor, 'an operations cursor'],
      [forged(['2025-03-01T00:00:00.000Z', 'apr_x']), 'the old [at, id] form'],
      [forged({ v: 1, account: ACCOUNT, filters: { state: 'lost' }, order: 'asc', at, id: 'apr_x' }), 'a state no approval has'],
      [forged({ v: 1, account: ACCOUNT, filters: { fingerprint: 'f' }, order: 'asc', at, id: 'apr_x' }), 'a filter of another list'],
    ] as const) {
      refusesCursor(t, await app.request('GET', `/v1/approvals?cursor=${encodeURIComponent(cursor)}`, { key: app.approver }), /is not a cursor this server gave out/, what);
    }
    // Its order is the list's one order: a cursor in the other cannot continue it.
    const descending = forged({ v: 1, account: ACCOUNT, filters: {}, order: 'desc', at, id: 'apr_x' });
    refusesCursor(t, await app.request('GET', `/v1/approvals?cursor=${descending}`, { key: app.approver }), /other order/, 'desc');
  });
}
