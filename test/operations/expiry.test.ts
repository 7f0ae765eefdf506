import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { dueLeases } from '../../src/operations/transitions.js';
import { claim, eventTypes, movableClock, report, ticketClaim } from './claims.js';

for (const kind of await storeKinds()) {
  // The lease-expired case, written once: every late report of the holder and every retry of the key meet the lapsed lease.
  for (const sentFirst of [false, true]) {
    test(`[${kind}] after the lease ran out${sentFirst ? ' (sent reported in time)' : ''}: the holder's reports answer lease_lost, retries answer 409 unknown and never execute`, async (t) => {
      const clock = movableClock();
      const app = await startTestApp(t, kind, { clock });
      const gw = await app.keyFor('acme', 'gateway');
      const key = `k-expired-${sentFirst}`;
      const { body } = await claim(app, gw, key, ticketClaim('expired', { lease_seconds: 10 }));
      const token = body.lease.token;
      if (sentFirst) t.is((await report(app, gw, body.operation.id, { type: 'sent', lease_token: token })).status, 200);
      clock.advance(10_001);
      for (const late of [
        { type: 'sent', lease_token: token },
        { type: 'completed', lease_token: token, outcome: 'succeeded', response: { status: 200 } },
        { type: 'heartbeat', lease_token: token },
      ].slice(sentFirst ? 1 : 0)) {
        const res = await report(app, gw, body.operation.id, late);
        t.is(res.status, 409, res.text);
        t.is(res.body.error.code, 'lease_lost');
      }
      for (let i = 0; i < 2; i++) {
        const retry = await claim(app, gw, key, ticketClaim('expired', { lease_seconds: 10 }));
        t.is(retry.status, 409);
        t.like(retry.body, { outcome: 'unknown', execute: false, operation: { state: 'unknown' } });
        t.is(retry.body.lease, undefined);
      }
      t.deepEqual(await eventTypes(app, 'acme', body.operation.id), [
        'attempted', ...(sentFirst ? ['sent'] : []), 'lease_expired', 'retried', 'retried',
      ]);
    });
  }

  test(`[${kind}] the sweeper marks an expired lease unknown with exactly one lease_expired event, even when sweeps race`, async (t) => {
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const gw = await app.keyFor('acme', 'gateway');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await claim(app, gw, `k-sweep-${i}`, ticketClaim(`sweep ${i}`, { lease_seconds: 2 }))).body.operation.id);
    clock.advance(2500);
    await Promise.all(Array.from({ length: 4 }, () => app.context.operations.sweepExpiredLeases()));
    for (const id of ids) t.deepEqual(await eventTypes(app, 'acme', id), ['attempted', 'lease_expired']);
    const listed = await app.request('GET', '/v1/operations?state=unknown', { key: gw });
    t.deepEqual(listed.body.items.map((o: { id: string }) => o.id).sort(), [...ids].sort());
  });

  test(`[${kind}] the background sweeper turns a lapsed lease unknown within a few seconds without any read`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-bg', ticketClaim('bg', { lease_seconds: 1 }));
    const deadline = Date.now() + 5000;
    let state = 'running';
    while (Date.now() < deadline && state !== 'unknown') {
      await new Promise((r) => setTimeout(r, 200));
      const row = await app.context.store.db.selectFrom('operations').select('state').where('id', '=', body.operation.id).executeTakeFirstOrThrow();
      state = row.state;
    }
    t.is(state, 'unknown');
    t.deepEqual(await eventTypes(app, 'acme', body.operation.id), ['attempted', 'lease_expired']);
  });

  test(`[${kind}] an admin resolves an unknown operation with evidence; retries then replay that response`, async (t) => {
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-resolve', ticketClaim('resolve', { lease_seconds: 30 }));
    const id = body.operation.id;
    const early = await app.request('POST', `/v1/operations/${id}/resolve`, { key: app.adminKey, body: { state: 'succeeded', note: 'too early' } });
    t.is(early.status, 409);
    t.is(early.body.error.code, 'invalid_transition');
    clock.advance(31_000);
    const byGateway = await app.request('POST', `/v1/operations/${id}/resolve`, { key: gw, body: { state: 'succeeded', note: 'x' } });
    t.is(byGateway.status, 403);
    const response = { status: 201, body: { id: 'T-77' } };
    const resolved = await app.request('POST', `/v1/operations/${id}/resolve`, {
      key: app.adminKey, body: { state: 'succeeded', note: 'found T-77 downstream', provider_ref: 'T-77', response },
    });
    t.is(resolved.status, 200, resolved.text);
    t.is(resolved.body.operation.state, 'succeeded');
    t.is(resolved.body.operation.provider_ref, 'T-77');
    t.deepEqual(resolved.body.operation.response, response);
    const again = await app.request('POST', `/v1/operations/${id}/resolve`, { key: app.adminKey, body: { state: 'failed', note: 'twice' } });
    t.is(again.body.error.code, 'invalid_transition');
    const retry = await claim(app, gw, 'k-resolve', ticketClaim('resolve', { lease_seconds: 30 }));
    t.is(retry.body.outcome, 'replayed');
    t.deepEqual(retry.body.response, response);
    // The worker that lost the lease is fenced off for good.
    const zombie = await report(app, gw, id, { type: 'completed', lease_token: body.lease.token, outcome: 'succeeded', response: { status: 200 } });
    t.is(zombie.body.error.code, 'lease_lost');
    t.deepEqual(await eventTypes(app, 'acme', id), ['attempted', 'lease_expired', 'resolved', 'replayed']);
    const timeline = await app.request('GET', `/v1/operations/${id}/timeline`, { key: app.adminKey });
    const resolvedEvent = timeline.body.events.find((e: { type: string }) => e.type === 'resolved');
    t.is(resolvedEvent.payload.note, 'found T-77 downstream');
  });

  test(`[${kind}] a resolve whose response status is informational (199) answers 400 naming response.status and leaves the operation unknown; 200 and 599 are stored`, async (t) => {
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const gw = await app.keyFor('acme', 'gateway');
    const ids: Record<number, string> = {};
    for (const status of [199, 200, 599]) ids[status] = (await claim(app, gw, `k-resolve-${status}`, ticketClaim(`resolve ${status}`, { lease_seconds: 30 }))).body.operation.id;
    clock.advance(31_000);
    const resolve = (status: number) => app.request('POST', `/v1/operations/${ids[status]}/resolve`, {
      key: app.adminKey, body: { state: 'succeeded', note: 'found downstream', response: { status } },
    });
    // The resolution's response is what retries replay as the write's final answer; a 1xx never is one (RFC 9110 §15.2).
    const refused = await resolve(199);
    t.is(refused.status, 400, refused.text);
    t.deepEqual(refused.body, { error: { code: 'invalid_request', message: 'the member "response.status" must be >= 200' } });
    const read = await app.request('GET', `/v1/operations/${ids[199]}`, { key: gw });
    t.is(read.body.operation.state, 'unknown');
    t.deepEqual(await eventTypes(app, 'acme', ids[199]!), ['attempted', 'lease_expired'], 'the sweeper or the read settled the lease; nothing was resolved');
    for (const status of [200, 599]) {
      const resolved = await resolve(status);
      t.is(resolved.status, 200, resolved.text);
      t.deepEqual(resolved.body.operation.response, { status });
    }
  });

  if (kind === 'sqlite') {
    test('[sqlite] the sweeper finds due leases without reading finished operations, whose expiry has passed too', async (t) => {
      const app = await startTestApp(t, 'sqlite');
      // Every second, on every instance: on an index of lease_expires_at alone this read every
      // operation whose lease time had passed, finished or not (33 ms at 300,000 finished operations).
      for (const accountId of [undefined, 'acme']) {
        const query = dueLeases(app.context.store.db, Date.now(), accountId, 250).compile();
        const plan = await app.context.store.db.executeQuery({ ...query, sql: `EXPLAIN QUERY PLAN ${query.sql}`, query: query.query });
        const details = (plan.rows as Array<{ detail: string }>).map((row) => row.detail).join(' | ');
        t.regex(details, /USING INDEX \w+ \([^)]*\bstate=\?/, `${accountId ?? 'all accounts'}: ${details}`);
      }
    });
  }
}
