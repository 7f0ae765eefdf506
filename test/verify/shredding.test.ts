import test from 'ava';
import { runCli } from '../helpers/server-process.js';
import { storeKinds } from '../helpers/stores.js';
import { ACCOUNT, closedLedger, openLedger, verifyJson } from './ledger-fixture.js';

const kinds = await storeKinds();

for (const kind of kinds) {
  test(`[${kind}] a shredded account still verifies, is reported shredded, and its payloads no longer decrypt`, async (t) => {
    const ledger = await openLedger(t, kind);
    await ledger.append(4);
    await ledger.saveCheckpoint('cp.json');
    t.deepEqual(await ledger.context.ledger.readPayload(ledger.context.store.db, ACCOUNT, 2), { amount: 101, note: 'refund' });
    await ledger.close();

    const refused = await runCli(['accounts', 'shred', ACCOUNT, ...ledger.store.cliArgs]);
    t.is(refused.code, 2, 'without --yes nothing is destroyed');
    const shred = await runCli(['accounts', 'shred', ACCOUNT, '--yes', ...ledger.store.cliArgs]);
    t.is(shred.code, 0, shred.stderr);

    const reopened = await ledger.reopen();
    t.teardown(() => reopened.close());
    t.is(await reopened.context.ledger.readPayload(reopened.context.store.db, ACCOUNT, 2), null);

    const masterKey = ['--master-key', ledger.file('master.key')];
    const direct = await verifyJson([...ledger.store.cliArgs, ...masterKey]);
    t.is(direct.code, 0, direct.stdout + direct.stderr);
    t.deepEqual(direct.report!.accounts, [
      { account_id: ACCOUNT, events: 4, checkpoints: 1, first_bad_seq: null, reason: null, shredded: true },
    ]);
    const human = await runCli(['verify', ...ledger.store.cliArgs, ...masterKey]);
    t.regex(human.stdout, /account acme: intact .*shredded/);

    const file = ledger.file('after-shred.ndjson');
    t.is((await runCli(['export', ...ledger.store.cliArgs, '--out', file])).code, 0);
    const fromExport = await verifyJson([file, ...masterKey]);
    t.is(fromExport.code, 0);
    t.true(fromExport.report!.accounts[0]!.shredded);
  });
}

test('with --master-key an intact account has every payload decrypt', async (t) => {
  const ledger = await closedLedger(t);
  const good = await verifyJson([...ledger.store.cliArgs, '--master-key', ledger.file('master.key')]);
  t.is(good.code, 0);
  t.false(good.report!.accounts[0]!.shredded);
  // Another master key, and a key row that does not unwrap: master-key.test.ts.
});
