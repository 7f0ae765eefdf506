import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, eventCount, eventTypes, movableClock, report, ticketClaim, verifyExitCode } from './claims.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] sent, accepted and completed move the operation and each records one event`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-life', ticketClaim());
    const id = body.operation.id;
    const token = body.lease.token;
    const sent = await report(app, gw, id, { type: 'sent', lease_token: token });
    t.is(sent.status, 200);
    t.is(sent.body.operation.state, 'sent');
    const accepted = await report(app, gw, id, { type: 'accepted', lease_token: token, provider_ref: 'pay_123' });
    t.is(accepted.body.operation.state, 'accepted');
    t.is(accepted.body.operation.provider_ref, 'pay_123');
    const response = { status: 402, body: { error: 'card declined' } };
    const done = await report(app, gw, id, { type: 'completed', lease_token: token, outcome: 'failed', response });
    t.is(done.status, 200);
    t.is(done.body.operation.state, 'failed');
    t.deepEqual(done.body.operation.response, response);
    t.deepEqual(await eventTypes(app, 'acme', id), ['attempted', 'sent', 'accepted', 'completed']);
    const header = await app.context.store.db.selectFrom('events').select(['response_status', 'provider_ref', 'state'])
      .where('account_id', '=', 'acme').where('type', '=', 'completed').executeTakeFirstOrThrow();
    t.deepEqual(header, { response_status: 402, provider_ref: 'pay_123', state: 'failed' });
    t.is((await verifyExitCode(app)).code, 0);
  });

  test(`[${kind}] a response echoing a command of the deepest nesting a claim takes (64) is recorded; one level more is refused`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const nest = (depth: number): unknown => (depth === 1 ? { leaf: true } : { n: nest(depth - 1) });
    const deepest = nest(64);
    const { body } = await claim(app, gw, 'k-deep', { method: 'POST', route: '/tickets', command: deepest });
    t.is(body.outcome, 'created', JSON.stringify(body));
    const token = body.lease.token;
    await report(app, gw, body.operation.id, { type: 'sent', lease_token: token });
    const tooDeep = await report(app, gw, body.operation.id, { type: 'completed', lease_token: token, outcome: 'succeeded', response: { status: 200, body: nest(65) } });
    t.is(tooDeep.status, 400, tooDeep.text);
    t.is(tooDeep.body.error.code, 'invalid_json');
    const done = await report(app, gw, body.operation.id, { type: 'completed', lease_token: token, outcome: 'succeeded', response: { status: 200, body: deepest } });
    t.is(done.status, 200, done.text);
    t.deepEqual(done.body.operation.response.body, deepest);
    const replay = await claim(app, gw, 'k-deep', { method: 'POST', route: '/tickets', command: deepest });
    t.is(replay.body.outcome, 'replayed', JSON.stringify(replay.body).slice(0, 300));
    t.deepEqual(replay.body.response.body, deepest, 'read back from the sealed event');
    t.is((await verifyExitCode(app)).code, 0);
  });

  test(`[${kind}] a completed report whose response status is informational (101) answers 400 naming response.status and records nothing; 200 and 599 are stored`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const sentOperation = async (key: string) => {
      const { body } = await claim(app, gw, key, ticketClaim(key));
      await report(app, gw, body.operation.id, { type: 'sent', lease_token: body.lease.token });
      return { id: body.operation.id as string, token: body.lease.token as string };
    };
    // Retries replay the stored response as the write's final answer, and a 1xx never is one (RFC 9110 §15.2).
    const informational = await sentOperation('k-101');
    const refused = await report(app, gw, informational.id, { type: 'completed', lease_token: informational.token, outcome: 'succeeded', response: { status: 101 } });
    t.is(refused.status, 400, refused.text);
    t.deepEqual(refused.body, { error: { code: 'invalid_request', message: 'the member "response.status" must be >= 200' } });
    t.deepEqual(await eventTypes(app, 'acme', informational.id), ['attempted', 'sent']);
    for (const status of [200, 599]) {
      const { id, token } = await sentOperation(`k-${status}`);
      const done = await report(app, gw, id, { type: 'completed', lease_token: token, outcome: 'succeeded', response: { status } });
      t.is(done.status, 200, done.text);
      t.deepEqual(done.body.operation.response, { status });
    }
  });

  test(`[${kind}] an identical repeat of a report answers 200 and records nothing, even after the terminal report`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-repeat', ticketClaim());
    const id = body.operation.id;
    const token = body.lease.token;
    const completed = { type: 'completed', lease_token: token, outcome: 'succeeded', response: { status: 201, body: { id: 9 } } };
    await report(app, gw, id, { type: 'sent', lease_token: token });
    await report(app, gw, id, completed);
    const before = await eventCount(app, 'acme');
    for (const repeat of [{ type: 'sent', lease_token: token }, completed, completed]) {
      const res = await report(app, gw, id, repeat);
      t.is(res.status, 200, res.text);
      t.is(res.body.operation.state, 'succeeded');
    }
    t.is(await eventCount(app, 'acme'), before);
    // Not the same data: another outcome is a new report, and the state machine refuses it.
    const changed = await report(app, gw, id, { ...completed, outcome: 'failed' });
    t.is(changed.status, 409);
    t.is(changed.body.error.code, 'invalid_transition');
    t.is(await eventCount(app, 'acme'), before);
  });

  test(`[${kind}] reports the state machine does not allow answer 409 invalid_transition and record nothing`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-illegal', ticketClaim());
    const id = body.operation.id;
    const token = body.lease.token;
    for (const illegal of [
      { type: 'accepted', lease_token: token, provider_ref: 'x' },
      { type: 'completed', lease_token: token, outcome: 'succeeded', response: { status: 200 } },
    ]) {
      const res = await report(app, gw, id, illegal);
      t.is(res.status, 409);
      t.is(res.body.error.code, 'invalid_transition');
    }
    await report(app, gw, id, { type: 'sent', lease_token: token });
    const cancelAfterSent = await report(app, gw, id, { type: 'canceled', lease_token: token });
    t.is(cancelAfterSent.body.error.code, 'invalid_transition', 'once sent, the write may have happened: it cannot be canceled');
    t.deepEqual(await eventTypes(app, 'acme', id), ['attempted', 'sent']);
    const badShape = await report(app, gw, id, { type: 'accepted', lease_token: token });
    t.is(badShape.status, 400);
    t.is(badShape.body.error.code, 'invalid_request');
  });

  test(`[${kind}] a wrong lease token answers 409 lease_lost and moves nothing`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-token', ticketClaim());
    for (const token of ['not-the-token', body.lease.token.slice(0, -1) + (body.lease.token.endsWith('A') ? 'B' : 'A')]) {
      const res = await report(app, gw, body.operation.id, { type: 'sent', lease_token: token });
      t.is(res.status, 409);
      t.is(res.body.error.code, 'lease_lost');
    }
    t.deepEqual(await eventTypes(app, 'acme', body.operation.id), ['attempted']);
  });

  test(`[${kind}] a heartbeat extends the lease by lease_seconds and records nothing; after the end it is refused`, async (t) => {
    const clock = movableClock();
    const app = await startTestApp(t, kind, { clock });
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-beat', ticketClaim('beat', { lease_seconds: 5 }));
    const id = body.operation.id;
    const token = body.lease.token;
    clock.advance(1100);
    const beat = await report(app, gw, id, { type: 'heartbeat', lease_token: token });
    t.is(beat.status, 200);
    const row = await app.context.store.db.selectFrom('operations').select('lease_expires_at').where('id', '=', id).executeTakeFirstOrThrow();
    t.true(row.lease_expires_at! > Date.parse(body.lease.expires_at) + 900);
    t.deepEqual(await eventTypes(app, 'acme', id), ['attempted']);
    await report(app, gw, id, { type: 'canceled', lease_token: token });
    const late = await report(app, gw, id, { type: 'heartbeat', lease_token: token });
    t.is(late.status, 409);
    t.is(late.body.error.code, 'invalid_transition');
  });

  test(`[${kind}] twenty concurrent identical completed reports all answer 200 and record one completed event`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const { body } = await claim(app, gw, 'k-once', ticketClaim());
    const token = body.lease.token;
    await report(app, gw, body.operation.id, { type: 'sent', lease_token: token });
    const completed = { type: 'completed', lease_token: token, outcome: 'succeeded', response: { status: 200, body: { ok: true } } };
    const answers = await Promise.all(Array.from({ length: 20 }, () => report(app, gw, body.operation.id, completed)));
    t.true(answers.every((a) => a.status === 200), answers.map((a) => a.status).join(','));
    t.deepEqual(await eventTypes(app, 'acme', body.operation.id), ['attempted', 'sent', 'completed']);
  });
}
