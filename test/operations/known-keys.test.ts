import test from 'ava';
import { KnownKeys } from '../../src/operations/known-keys.js';
import type { OperationRow } from '../../src/operations/operation-json.js';
import { answerExisting } from '../../src/operations/claim-existing.js';
import { toClaimRequest, type ClaimBody } from '../../src/operations/claim-request.js';
import { lockOperation } from '../../src/operations/operation-rows.js';
import { applyTransition, TRANSITIONS } from '../../src/operations/transitions.js';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { openContext } from '../../src/context.js';
import { claim, completedOperation, eventTypes, report, ticketClaim } from './claims.js';

// Before any test is declared: ava takes every declaration in the file's first turn.
const kinds = await storeKinds();

test('a remembered key is known in its account only, and stays known for at least one generation', (t) => {
  const keys = new KnownKeys();
  keys.remember('acme', 'k1');
  t.is(keys.lookup('acme', 'k1'), 'taken');
  t.is(keys.lookup('other', 'k1'), undefined);
  t.is(keys.lookup('acme', 'k2'), undefined);
  for (let i = 0; i < 50_000; i++) keys.remember('acme', `filler-${i}`);
  t.is(keys.lookup('acme', 'k1'), 'taken', 'kept in the older generation');
  for (let i = 0; i < 50_000; i++) keys.remember('acme', `more-${i}`);
  t.is(keys.lookup('acme', 'k1'), undefined, 'forgotten after two generations: memory stays bounded');
});

const rowIn = (state: string, key = 'k1'): OperationRow => ({ account_id: 'acme', idempotency_key: key, state } as OperationRow);

test('only a succeeded or failed row is kept: every other state may still change', (t) => {
  const keys = new KnownKeys();
  for (const state of ['running', 'sent', 'accepted', 'unknown', 'canceled', 'awaiting_approval', 'approved', 'denied']) {
    keys.rememberFinished(rowIn(state));
    t.is(keys.lookup('acme', 'k1'), undefined, state);
  }
  const succeeded = rowIn('succeeded');
  keys.rememberFinished(succeeded);
  t.is(keys.lookup('acme', 'k1'), succeeded);
  t.is(keys.lookup('other', 'k1'), undefined);
  keys.rememberFinished(rowIn('failed', 'k2'));
  t.is((keys.lookup('acme', 'k2') as OperationRow).state, 'failed');
  for (let i = 0; i < 10_000; i++) keys.rememberFinished(rowIn('succeeded', `filler-${i}`));
  t.is(keys.lookup('acme', 'k1'), undefined, 'at most two generations of 5,000 rows are held');
});

test('no transition leaves succeeded or failed: a kept row stays what the database holds', (t) => {
  // The kept rows are sound only while this holds; a transition out of either state must first take them out of KnownKeys.
  for (const [name, rule] of Object.entries(TRANSITIONS)) {
    for (const state of ['succeeded', 'failed']) t.false((rule.from as readonly string[]).includes(state), `${name} starts from ${state}`);
  }
});

test('[sqlite] a retry answers the same whichever instance saw the claim: the one that did looks the key up first, the other finds it by the insert', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  const first = await claim(app, gw, 'k', ticketClaim('one'));
  t.is(first.status, 201);
  // This instance knows the key now; a second context on the same database (another instance) does not.
  const other = await openContext(app.store.config);
  t.teardown(() => other.close());
  const principal = (await app.context.principals.authenticate(gw))!;
  const body = ticketClaim('one') as unknown as Parameters<typeof other.operations.claim>[2];
  const [here, there] = await Promise.all([app.context.operations.claim(principal, 'k', body), other.operations.claim(principal, 'k', body)]);
  t.is(here.outcome, 'in_progress');
  t.is(there.outcome, 'in_progress');
  t.is(here.operation.id, first.body.operation.id);
  t.is(there.operation.id, first.body.operation.id);
  const changed = await claim(app, gw, 'k', ticketClaim('two'));
  t.is(changed.status, 422);
  t.is(changed.body.error.code, 'fingerprint_mismatch', 'a changed payload under a known key is still refused');
  const events = await app.context.store.db.selectFrom('events').select('type').where('account_id', '=', 'acme').execute();
  t.is(events.filter((e) => e.type === 'attempted').length, 1, 'one operation, created once');
});

for (const kind of kinds) {
  test(`[${kind}] replays answered from the kept row answer as the first did, each recorded, and a changed payload is still refused`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const response = { status: 201, body: { id: 7 } };
    const { operation } = await completedOperation(app, gw, 'k-kept', response);
    // The first replay reads the row and keeps it; the next ones are answered from it.
    const replays = [];
    for (let i = 0; i < 3; i++) replays.push(await claim(app, gw, 'k-kept', ticketClaim()));
    for (const replay of replays) {
      t.is(replay.status, 200);
      t.is(replay.headers.get('idempotent-replayed'), 'true');
      t.deepEqual(replay.body, replays[0]!.body);
    }
    t.deepEqual(replays[0]!.body.response, response);
    t.is(replays[0]!.body.operation.state, 'succeeded');
    const changed = await claim(app, gw, 'k-kept', ticketClaim('another title'));
    t.is(changed.status, 422);
    t.is(changed.body.error.code, 'fingerprint_mismatch');
    // Another instance on the same database holds no row and answers the same.
    const other = await openContext(app.store.config);
    t.teardown(() => other.close());
    const principal = (await app.context.principals.authenticate(gw))!;
    const there = await other.operations.claim(principal, 'k-kept', ticketClaim() as unknown as ClaimBody);
    t.deepEqual(there.operation, replays[0]!.body.operation);
    t.deepEqual(await eventTypes(app, 'acme', operation.id), ['attempted', 'sent', 'completed', 'replayed', 'replayed', 'replayed', 'conflicted', 'replayed']);
  });

  test(`[${kind}] a finished row read in a transaction that rolled back is not kept: the operation it named was not finished`, async (t) => {
    const app = await startTestApp(t, kind);
    const gw = await app.keyFor('acme', 'gateway');
    const created = await claim(app, gw, 'k-rolled', ticketClaim());
    await report(app, gw, created.body.operation.id, { type: 'sent', lease_token: created.body.lease.token });
    const { store, ledger, clock, policies } = app.context;
    const principal = (await app.context.principals.authenticate(gw))!;
    const request = toClaimRequest(policies, principal, 'k-rolled', ticketClaim() as unknown as ClaimBody);
    const knownKeys = new KnownKeys();
    // Completed and replayed in one unit that then fails: the replay saw a succeeded row that never committed.
    await t.throwsAsync(store.transact(async (trx, work) => {
      const sent = (await lockOperation(store, trx, 'acme', created.body.operation.id))!;
      const nowMs = clock.now();
      const done = await applyTransition(trx, ledger, sent, 'completed', { actor: principal.id, nowMs, to: 'succeeded' });
      const result = await answerExisting({ deps: { store, ledger, clock }, trx, work, request, nowMs, knownKeys }, done);
      t.is('answer' in result && result.answer.outcome, 'replayed');
      throw new Error('boom');
    }), { message: 'boom' });
    t.is(knownKeys.lookup('acme', 'k-rolled'), undefined);
    const retry = await claim(app, gw, 'k-rolled', ticketClaim());
    t.is(retry.body.outcome, 'in_progress', 'the operation is still sent');
  });
}
