import test from 'ava';
import { KnownKeys } from '../../src/operations/known-keys.js';
import { startTestApp } from '../helpers/app.js';
import { openContext } from '../../src/context.js';
import { claim, ticketClaim } from './claims.js';

test('a remembered key is known in its account only, and stays known for at least one generation', (t) => {
  const keys = new KnownKeys();
  keys.remember('acme', 'k1');
  t.true(keys.has('acme', 'k1'));
  t.false(keys.has('other', 'k1'));
  t.false(keys.has('acme', 'k2'));
  for (let i = 0; i < 50_000; i++) keys.remember('acme', `filler-${i}`);
  t.true(keys.has('acme', 'k1'), 'kept in the older generation');
  for (let i = 0; i < 50_000; i++) keys.remember('acme', `more-${i}`);
  t.false(keys.has('acme', 'k1'), 'forgotten after two generations: memory stays bounded');
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
