import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, completedOperation, report, ticketClaim } from './claims.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] a restarted agent that kept only its key finds its operation; an unknown key finds nothing`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'kept-key', ticketClaim());
    const found = await app.request('GET', '/v1/operations?idempotency_key=kept-key', { key: gw });
    t.is(found.status, 200);
    t.deepEqual(found.body.items.map((o: { id: string }) => o.id), [body.operation.id]);
    t.is(found.body.next_cursor, null);
    const byId = await app.request('GET', `/v1/operations/${body.operation.id}`, { key: gw });
    t.deepEqual(byId.body.operation, found.body.items[0]);
    t.deepEqual((await app.request('GET', '/v1/operations?idempotency_key=never-used', { key: gw })).body, { items: [], next_cursor: null });
  });

  test(`[${kind}] listing by state pages with an opaque cursor until next_cursor is null`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const running: string[] = [];
    for (let i = 0; i < 5; i++) running.push((await claim(app, gw, `page-${i}`, ticketClaim(`page ${i}`))).body.operation.id);
    await completedOperation(app, gw, 'page-done', { status: 200 }, ticketClaim('done'));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `/v1/operations?state=running&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await app.request('GET', query, { key: gw });
      t.is(page.status, 200, page.text);
      t.true(page.body.items.length <= 2);
      seen.push(...page.body.items.map((o: { id: string; state: string }) => o.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    t.deepEqual([...seen].sort(), [...running].sort());
    t.is(pages, 3);
    for (const bad of ['?state=nonsense', '?limit=0', '?limit=1001', '?cursor=%21%21', '?limit=abc']) {
      const res = await app.request('GET', `/v1/operations${bad}`, { key: gw });
      t.is(res.status, 400, bad);
      t.is(res.body.error.code, 'invalid_request');
    }
  });

  test(`[${kind}] the timeline shows which agent run sent each request, with which key and fingerprint, and what came back`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const auditor = await app.keyFor('acme', 'auditor');
    const response = { status: 201, body: { id: 'T-5' } };
    const first = await claim(app, gw, 'tl-key', ticketClaim('timeline', { agent_run_id: 'run-first' }));
    await report(app, gw, first.body.operation.id, { type: 'sent', lease_token: first.body.lease.token });
    await report(app, gw, first.body.operation.id, { type: 'completed', lease_token: first.body.lease.token, outcome: 'succeeded', response });
    await claim(app, gw, 'tl-key', ticketClaim('timeline', { agent_run_id: 'run-retry' }));
    await claim(app, gw, 'tl-key', ticketClaim('changed', { agent_run_id: 'run-confused' }));

    const { body } = await app.request('GET', `/v1/operations/${first.body.operation.id}/timeline`, { key: gw });
    t.is(body.operation_id, first.body.operation.id);
    const events = body.events as Array<Record<string, unknown>>;
    t.deepEqual(events.map((e) => e.type), ['attempted', 'sent', 'completed', 'replayed', 'conflicted']);
    t.deepEqual(events.map((e) => e.agent_run_id), ['run-first', 'run-first', 'run-first', 'run-retry', 'run-confused']);
    t.true(events.every((e) => e.idempotency_key === 'tl-key'));
    const fingerprint = first.body.operation.fingerprint;
    t.deepEqual(events.map((e) => e.fingerprint === fingerprint), [true, true, true, true, false]);
    t.true(events.every((e) => typeof e.seq === 'number' && typeof e.ts === 'string' && /^[0-9a-f]{64}$/.test(e.hash as string)));
    t.is(events[2]!.response_status, 201);
    t.deepEqual(events[0]!.payload, { title: 'timeline', priority: 'high' });
    t.deepEqual((events[2]!.payload as { response: unknown }).response, response);
    t.false('payload' in events[1]!);

    const audited = await app.request('GET', `/v1/operations/${first.body.operation.id}/timeline`, { key: auditor });
    t.deepEqual(audited.body.events.map((e: { type: string }) => e.type), events.map((e) => e.type));
    t.true(audited.body.events.every((e: object) => 'payload' in e));
  });
}
