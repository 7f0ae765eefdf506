import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, eventTypes, report, ticketClaim } from './claims.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] 100 concurrent identical claims: exactly one executes, the others are in_progress, one attempted event`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const answers = await Promise.all(Array.from({ length: 100 }, () => claim(app, gw, 'k-stampede', ticketClaim('stampede'))));
    const executed = answers.filter((a) => a.body?.execute === true);
    t.is(executed.length, 1);
    t.is(executed[0]!.status, 201);
    const others = answers.filter((a) => a.body?.execute !== true);
    t.true(others.every((a) => a.status === 409 && a.body.outcome === 'in_progress'), JSON.stringify(others.map((a) => a.status)));
    const id = executed[0]!.body.operation.id;
    t.true(answers.every((a) => a.body.operation.id === id));
    const types = await eventTypes(app, 'acme', id);
    t.is(types.filter((type) => type === 'attempted').length, 1);
    t.is(types.filter((type) => type === 'retried').length, 99);
    t.is(await app.context.store.db.selectFrom('operations').select('id').execute().then((r) => r.length), 1);
  });

  test(`[${kind}] 100 concurrent identical claims while the winner completes: one executes, the rest in_progress or replayed`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const response = { status: 201, body: { id: 'T-1' } };
    const answers = await Promise.all(Array.from({ length: 100 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i % 10));
      const answer = await claim(app, gw, 'k-race', ticketClaim('race'));
      if (answer.body?.execute === true) {
        // The winner finishes while the stampede goes on.
        await report(app, gw, answer.body.operation.id, { type: 'sent', lease_token: answer.body.lease.token });
        await report(app, gw, answer.body.operation.id, { type: 'completed', lease_token: answer.body.lease.token, outcome: 'succeeded', response });
      }
      return answer;
    }));
    t.is(answers.filter((a) => a.body?.execute === true).length, 1);
    for (const answer of answers.filter((a) => a.body?.execute !== true)) {
      t.true(['in_progress', 'replayed'].includes(answer.body.outcome), answer.text);
      if (answer.body.outcome === 'replayed') t.deepEqual(answer.body.response, response);
    }
    const id = answers[0]!.body.operation.id;
    const types = await eventTypes(app, 'acme', id);
    t.is(types.filter((type) => type === 'attempted').length, 1);
    t.is(types.filter((type) => type === 'retried' || type === 'replayed').length, 99);
  });

  test(`[${kind}] concurrent claims with different keys in one account all create, with a gapless chain`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => claim(app, gw, `k-many-${i}`, ticketClaim(`many ${i}`))));
    t.true(answers.every((a) => a.status === 201));
    const seqs = (await app.context.store.db.selectFrom('events').select('seq').where('account_id', '=', 'acme').orderBy('seq').execute()).map((r) => r.seq);
    t.deepEqual(seqs, Array.from({ length: 50 }, (_, i) => i + 1));
  });
}
