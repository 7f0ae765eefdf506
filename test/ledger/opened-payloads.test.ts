import test from 'ava';
import { OpenedPayloads } from '../../src/ledger/opened-payloads.js';
import type { EventInput } from '../../src/ledger/event-input.js';
import { startTestApp } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';
import { storeKinds } from '../helpers/stores.js';
import { claim, completedOperation, ticketClaim } from '../operations/claims.js';

// Before any test is declared: ava takes every declaration in the file's first turn.
const kinds = await storeKinds();
const noted = (note: string): EventInput => ({ account_id: 'acme', type: 'attempted', actor: null, payload: { note } });

test('the oldest payload not used since goes first, and a hit counts as a use', (t) => {
  const opened = new OpenedPayloads();
  for (let seq = 1; seq <= 10_000; seq++) opened.keep('acme', seq, `{"n":${seq}}`);
  t.is(opened.get('acme', 1), '{"n":1}');
  opened.keep('acme', 10_001, '{"n":10001}');
  t.is(opened.size, 10_000);
  t.is(opened.get('acme', 2), undefined, 'the oldest not used since went');
  t.is(opened.get('acme', 1), '{"n":1}', 'the one just used stayed');
  opened.keep('acme', 10_002, '{"n":10002}');
  t.is(opened.get('acme', 3), undefined, 'the next oldest went, not the one used since');
  t.is(opened.get('acme', 1), '{"n":1}');
});

test('a payload over 64 Ki characters is not kept, and the whole stays under 16 Mi characters', (t) => {
  const opened = new OpenedPayloads();
  opened.keep('acme', 1, 'x'.repeat(64 * 1024 + 1));
  t.is(opened.get('acme', 1), undefined);
  for (let seq = 1; seq <= 300; seq++) opened.keep('acme', seq, 'y'.repeat(64 * 1024));
  t.is(opened.size, 256, '256 payloads of 64 Ki characters are 16 Mi');
  t.is(opened.get('acme', 44), undefined);
  t.truthy(opened.get('acme', 45));
});

test('forgetting an account drops its payloads and no other account\'s', (t) => {
  const opened = new OpenedPayloads();
  opened.keep('acme', 1, '1');
  opened.keep('acme', 2, '2');
  opened.keep('acme2', 1, 'other');
  opened.forget('acme');
  t.is(opened.get('acme', 1), undefined);
  t.is(opened.get('acme', 2), undefined);
  t.is(opened.get('acme2', 1), 'other', 'an account whose id starts with the other\'s is a different account');
});

for (const kind of kinds) {
  test(`[${kind}] a payload read in a transaction that rolled back is not kept: its seq, taken again by another event, reads as that event's`, async (t) => {
    const { store, ledger } = (await startTestApp(t, kind)).context;
    await store.transact((trx) => ledger.append(trx, noted('first')));
    let rolledBackSeq = 0;
    await t.throwsAsync(store.transact(async (trx, work) => {
      rolledBackSeq = (await ledger.append(trx, noted('rolled back'))).seq;
      t.deepEqual(await ledger.readPayload(trx, 'acme', rolledBackSeq, work), { note: 'rolled back' });
      throw new Error('boom');
    }), { message: 'boom' });
    const { seq } = await store.transact((trx) => ledger.append(trx, noted('committed')));
    t.is(seq, rolledBackSeq, 'the rolled-back event left its seq free');
    // Read twice, each time in a unit that commits: the first keeps what it opened, the second is served it.
    for (let read = 0; read < 2; read++) {
      t.deepEqual(await store.transact((trx, work) => ledger.readPayload(trx, 'acme', seq, work)), { note: 'committed' });
    }
  });

  test(`[${kind}] a replayed response stops being served once the account is shredded by another process`, async (t) => {
    // The test's own clock, which also times the data key cache: moved past its 4 s, as another instance's would be.
    let offsetMs = 0;
    const app = await startTestApp(t, kind, { clock: { now: () => Date.now() + offsetMs } });
    const gw = await app.keyFor('acme', 'gateway');
    const response = { status: 201, body: { id: 7, secret: 'the ticket text' } };
    await completedOperation(app, gw, 'k-shred', response);
    // The first replay opens the stored response and keeps it; the second is answered from what was kept.
    for (let replay = 0; replay < 2; replay++) t.deepEqual((await claim(app, gw, 'k-shred', ticketClaim())).body.response, response);
    const shredded = await runCli(['accounts', 'shred', 'acme', '--yes', ...app.store.cliArgs]);
    t.is(shredded.code, 0, shredded.stderr);
    offsetMs += 5_000;
    const after = await claim(app, gw, 'k-shred', ticketClaim());
    t.is(after.body.outcome, 'replayed');
    t.is(after.body.response, null, 'a shredded account\'s response is gone, kept or not');
  });
}
