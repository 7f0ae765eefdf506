import test from 'ava';
import { storeKinds } from '../helpers/stores.js';
import type { TestApp } from '../helpers/app.js';
import { ACCOUNT, OTHER_ACCOUNT, seedIncident } from './incident.js';

interface Op { id: string; idempotency_key: string; created_at: string; state: string }

/** Every page of one search, following next_cursor with the cursor alone (it carries the question). */
async function allPages(app: TestApp, key: string, query: string, limit: number): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let path = `/v1/operations?${query}&limit=${limit}`;
  for (let pages = 1; pages < 50; pages++) {
    const res = await app.request('GET', path, { key });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    if (res.body.items.length > limit) throw new Error('a page longer than its limit');
    keys.push(...res.body.items.map((o: Op) => o.idempotency_key));
    if (res.body.next_cursor === null) return { keys, pages };
    // Half the time repeat the filters with the cursor: allowed as long as they are the same.
    path = pages % 2 ? `/v1/operations?cursor=${encodeURIComponent(res.body.next_cursor)}&limit=${limit}` : `/v1/operations?${query}&cursor=${encodeURIComponent(res.body.next_cursor)}&limit=${limit}`;
  }
  throw new Error('no end of pages');
}

for (const kind of await storeKinds()) {
  test(`[${kind}] each filter returns exactly the expected operations, newest first and with order=asc, across pages`, async (t) => {
    const incident = await seedIncident(t, kind);
    const { app, auditor, fingerprints } = incident;
    const all = (await app.request('GET', `/v1/operations?account_id=${ACCOUNT}`, { key: auditor })).body.items as Op[];
    t.deepEqual(all.map((o) => o.idempotency_key), ['U-1', 'N-2', 'P-1', 'N-1', 'B-1', 'A-2', 'A-1']);
    const at = (key: string) => all.find((o) => o.idempotency_key === key)!.created_at;
    const cases: Array<[string, string[]]> = [
      ['agent_run_id=run-A', ['A-2', 'A-1']],
      ['business_key=note%3AC-7', ['P-1']],
      [`fingerprint=${fingerprints.refund}`, ['A-2', 'A-1']],
      ['idempotency_key=B-1', ['B-1']],
      ['method=PUT', ['P-1']],
      ['method=put', ['P-1']],
      ['route=/v1/refunds', ['U-1', 'B-1', 'A-2', 'A-1']],
      ['route=/v1/tickets/*/reopen', ['N-2', 'N-1']],
      ['route=/v1/*/C-7/*', ['P-1']],
      ['route=/v1/*', ['U-1', 'B-1', 'A-2', 'A-1']],
      ['route=/v1/tickets/*', []],
      ['state=unknown', ['U-1']],
      ['state=succeeded', ['N-2', 'P-1', 'N-1', 'B-1', 'A-2', 'A-1']],
      [`since=${at('B-1')}&until=${at('N-2')}`, ['P-1', 'N-1', 'B-1']],
      [`since=${encodeURIComponent(at('B-1').replace('Z', '+00:00'))}`, ['U-1', 'N-2', 'P-1', 'N-1', 'B-1']],
      ['route=/v1/refunds&agent_run_id=run-A&state=succeeded', ['A-2', 'A-1']],
      ['', ['U-1', 'N-2', 'P-1', 'N-1', 'B-1', 'A-2', 'A-1']],
    ];
    for (const [filter, expected] of cases) {
      const query = `account_id=${ACCOUNT}${filter ? `&${filter}` : ''}`;
      const desc = await allPages(app, auditor, query, 1);
      t.deepEqual(desc.keys, expected, `${filter} newest first`);
      t.is(desc.pages, Math.max(1, expected.length), filter);
      const asc = await allPages(app, auditor, `${query}&order=asc`, 2);
      t.deepEqual(asc.keys, [...expected].reverse(), `${filter} oldest first`);
      // The gateway of the account finds the same without naming it; the rival's gateway never does.
      const own = await allPages(app, incident.gateway, filter || 'order=desc', 3);
      t.deepEqual(own.keys, expected, `${filter} as the account's gateway`);
    }
    const rival = await allPages(app, incident.rivalGateway, 'agent_run_id=run-A', 5);
    t.deepEqual(rival.keys, ['R-2', 'R-1'], 'the rival sees its own run-A only');
  });

  test(`[${kind}] a bad filter, a cursor reused with other filters, and a forged cursor are 400 invalid_request naming the parameter`, async (t) => {
    const { app, auditor, gateway } = await seedIncident(t, kind);
    const bad: Array<[string, string]> = [
      ['route=/v1/t*x', 'route'], ['route=v1/refunds', 'route'], ['route=/v1//x', 'route'], ['state=lost', 'state'],
      ['since=yesterday', 'since'], ['until=2025-02-30T00:00:00Z', 'until'], ['since=2025-03-02T00:00:00Z&until=2025-03-01T00:00:00Z', 'until'],
      ['fingerprint=abc', 'fingerprint'], ['method=GE%20T', 'method'], ['order=sideways', 'order'], ['limit=0', 'limit'],
      ['limit=1001', 'limit'], ['agent=run-A', 'agent'], ['state=unknown&state=running', 'state'], ['cursor=%21%21', 'cursor'],
      ['idempotency_key=a%20b', 'idempotency_key'],
    ];
    for (const [query, parameter] of bad) {
      const res = await app.request('GET', `/v1/operations?account_id=${ACCOUNT}&${query}`, { key: auditor });
      t.is(res.status, 400, query);
      t.is(res.body.error.code, 'invalid_request', query);
      t.true(res.body.error.message.includes(`"${parameter}"`), `${query}: ${res.body.error.message}`);
    }
    const first = await app.request('GET', '/v1/operations?agent_run_id=run-A&limit=1', { key: gateway });
    const cursor = encodeURIComponent(first.body.next_cursor);
    for (const other of ['agent_run_id=run-B', 'state=running', 'order=asc', `account_id=${OTHER_ACCOUNT}`]) {
      const res = await app.request('GET', `/v1/operations?${other}&cursor=${cursor}`, { key: gateway });
      t.is(res.status, 400, other);
      t.regex(res.body.error.message, /"cursor"/);
    }
    const forged = Buffer.from(JSON.stringify({ v: 1, account: ACCOUNT, filters: { route: '/v1/t*x' }, order: 'desc', at: '2025-03-01T00:00:00.000Z', id: 'op_x' })).toString('base64url');
    const res = await app.request('GET', `/v1/operations?cursor=${forged}`, { key: gateway });
    t.is(res.status, 400);
    t.regex(res.body.error.message, /"cursor"/);
  });

  test(`[${kind}] tenancy: a gateway reads only its account, even through a forged cursor; auditors and admins must name the account; approvers read nothing`, async (t) => {
    const { app, auditor, gateway, rivalGateway } = await seedIncident(t, kind);
    t.is((await app.request('GET', `/v1/operations?account_id=${ACCOUNT}`, { key: rivalGateway })).status, 404);
    const forged = Buffer.from(JSON.stringify({ v: 1, account: ACCOUNT, filters: {}, order: 'desc', at: '2099-01-01T00:00:00.000Z', id: 'op_zzz' })).toString('base64url');
    t.is((await app.request('GET', `/v1/operations?cursor=${forged}`, { key: rivalGateway })).status, 404);
    for (const key of [auditor, app.adminKey]) {
      const res = await app.request('GET', '/v1/operations?agent_run_id=run-A', { key });
      t.is(res.status, 400);
      t.regex(res.body.error.message, /"account_id"/);
      t.is((await app.request('GET', `/v1/operations?account_id=${OTHER_ACCOUNT}`, { key })).body.items.length, 2);
    }
    const approver = await app.keyFor(ACCOUNT, 'approver');
    t.is((await app.request('GET', '/v1/operations', { key: approver })).status, 403);
    t.is((await app.request('GET', '/v1/operations?idempotency_key=A-1', { key: gateway })).body.items.length, 1);
    t.is((await app.request('GET', '/v1/operations?idempotency_key=A-1', { key: rivalGateway })).body.items.length, 0);
  });
}
