import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, eventTypes, movableClock, report, ticketClaim } from './claims.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] a zombie whose lease ran out cannot report sent or completed: lease_lost, and the operation is unknown`, async (t) => {
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-zombie', ticketClaim('zombie', { lease_seconds: 10 }));
    clock.advance(11_000);
    for (const late of [
      { type: 'sent', lease_token: body.lease.token },
      { type: 'completed', lease_token: body.lease.token, outcome: 'succeeded', response: { status: 200 } },
      { type: 'heartbeat', lease_token: body.lease.token },
    ]) {
      const res = await report(app, gw, body.operation.id, late);
      t.is(res.status, 409, res.text);
      t.is(res.body.error.code, 'lease_lost');
    }
    const read = await app.request('GET', `/v1/operations/${body.operation.id}`, { key: gw });
    t.is(read.body.operation.state, 'unknown');
    t.deepEqual(await eventTypes(app, 'acme', body.operation.id), ['attempted', 'lease_expired']);
  });

  test(`[${kind}] a zombie that reported sent before its lease ran out cannot complete afterwards`, async (t) => {
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-zombie-sent', ticketClaim('zombie', { lease_seconds: 10 }));
    await report(app, gw, body.operation.id, { type: 'sent', lease_token: body.lease.token });
    clock.advance(10_001);
    const done = await report(app, gw, body.operation.id, { type: 'completed', lease_token: body.lease.token, outcome: 'succeeded', response: { status: 200 } });
    t.is(done.body.error.code, 'lease_lost');
    const retry = await claim(app, gw, 'k-zombie-sent', ticketClaim('zombie', { lease_seconds: 10 }));
    t.is(retry.status, 409);
    t.is(retry.body.outcome, 'unknown');
    t.false(retry.body.execute);
    t.deepEqual(await eventTypes(app, 'acme', body.operation.id), ['attempted', 'sent', 'lease_expired', 'retried']);
  });

  test(`[${kind}] a claim retried after the lease ran out answers 409 unknown and never re-executes`, async (t) => {
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const gw = await app.keyFor('acme', 'gateway');
    const first = await claim(app, gw, 'k-expired', ticketClaim('expired', { lease_seconds: 1 }));
    clock.advance(1500);
    for (let i = 0; i < 3; i++) {
      const retry = await claim(app, gw, 'k-expired', ticketClaim('expired', { lease_seconds: 1 }));
      t.is(retry.status, 409);
      t.is(retry.body.outcome, 'unknown');
      t.false(retry.body.execute);
      t.is(retry.body.lease, undefined);
    }
    t.deepEqual(await eventTypes(app, 'acme', first.body.operation.id), ['attempted', 'lease_expired', 'retried', 'retried', 'retried']);
  });

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
}
