import test from 'ava';
import { storeKinds } from '../helpers/stores.js';
import { ACCOUNT, OTHER_ACCOUNT, seedIncident } from './incident.js';

interface Group { fingerprint: string; method: string; route: string; operations: Array<{ id: string; idempotency_key: string; state: string; created_at: string }> }

const keysOf = (groups: Group[]) => groups.map((g) => g.operations.map((o) => o.idempotency_key));

for (const kind of await storeKinds()) {
  test(`[${kind}] the duplicates report shows exactly run A's two keys for one refund, both completed; a smaller window shows nothing`, async (t) => {
    const { app, auditor, ids, fingerprints } = await seedIncident(t, kind);
    const report = await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}`, { key: auditor });
    t.is(report.status, 200, report.text);
    t.is(report.body.next_cursor, null);
    t.is(report.body.items.length, 1);
    const [group] = report.body.items as Group[];
    t.like(group, { fingerprint: fingerprints.refund, method: 'POST', route: '/v1/refunds' });
    t.deepEqual(group!.operations.map((o) => o.id), [ids['A-1'], ids['A-2']], 'in created_at order');
    t.deepEqual(group!.operations.map((o) => o.state), ['succeeded', 'succeeded'], 'the write may have run twice');
    t.truthy((group!.operations[0] as unknown as { response: unknown }).response, 'with the stored responses');

    const narrow = await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}&window_seconds=10`, { key: auditor });
    t.deepEqual(narrow.body, { items: [], next_cursor: null }, 'the two keys were 30 s apart');
    const since = group!.operations[1]!.created_at;
    const cut = await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}&since=${since}`, { key: auditor });
    t.deepEqual(cut.body.items, [], 'since selects the operations before they are grouped');
    const until = await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}&until=${since}`, { key: auditor });
    t.deepEqual(until.body.items, []);
  });

  test(`[${kind}] a window of five hours also chains the ticket reopened hours apart; the groups page newest first`, async (t) => {
    const { app, auditor } = await seedIncident(t, kind);
    const wide = await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}&window_seconds=18000`, { key: auditor });
    t.deepEqual(keysOf(wide.body.items), [['N-1', 'N-2'], ['A-1', 'A-2']]);
    const first = await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}&window_seconds=18000&limit=1`, { key: auditor });
    t.deepEqual(keysOf(first.body.items), [['N-1', 'N-2']]);
    t.truthy(first.body.next_cursor);
    const second = await app.request('GET', `/v1/review/duplicates?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`, { key: auditor });
    t.deepEqual(keysOf(second.body.items), [['A-1', 'A-2']]);
    t.is(second.body.next_cursor, null);
    const changed = await app.request('GET', `/v1/review/duplicates?window_seconds=600&cursor=${encodeURIComponent(first.body.next_cursor)}`, { key: auditor });
    t.is(changed.status, 400);
    t.regex(changed.body.error.message, /"cursor"/);
  });

  test(`[${kind}] the duplicates report: auditors and admins only, one account at a time, bad parameters named`, async (t) => {
    const { app, auditor, gateway, ids } = await seedIncident(t, kind);
    t.is((await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}`, { key: gateway })).status, 403);
    t.is((await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}`, { key: await app.keyFor(ACCOUNT, 'approver') })).status, 403);
    t.is((await app.request('GET', '/v1/review/duplicates', { key: auditor })).status, 400);
    const admin = await app.request('GET', `/v1/review/duplicates?account_id=${OTHER_ACCOUNT}`, { key: app.adminKey });
    t.deepEqual(keysOf(admin.body.items), [['R-1', 'R-2']], 'the rival account has its own pair, and only its own');
    t.false(JSON.stringify(admin.body).includes(ids['A-1']!));
    for (const [query, parameter] of [['window_seconds=0', 'window_seconds'], ['window_seconds=ten', 'window_seconds'], ['since=now', 'since'], ['limit=201', 'limit'], ['fingerprint=x', 'fingerprint'], ['cursor=e30', 'cursor']]) {
      const res = await app.request('GET', `/v1/review/duplicates?account_id=${ACCOUNT}&${query}`, { key: auditor });
      t.is(res.status, 400, query);
      t.true(res.body.error.message.includes(`"${parameter}"`), res.body.error.message);
    }
  });
}
