import test from 'ava';
import { runCli } from '../helpers/server-process.js';
import { storeKinds } from '../helpers/stores.js';
import { ACCOUNT, type TestLedger, openLedger, readLines, verifyJson, writeLines } from './ledger-fixture.js';

/**
 * verify --master-key and an account with no data key at all (its `accounts` row deleted, or
 * its export `data_keys` member removed), as against a shredded one (a row whose key is NULL):
 * without the key no payload can be checked, so someone who swapped payloads in the unsigned
 * tail and deleted the row would pass. Such an account is TAMPERED at its first event that
 * carries a payload; one that never sealed a payload (the export leaves it out of data_keys)
 * stays intact, and without --master-key payloads are not opened at all.
 */

const NO_KEY = /^event 3: the account has sealed payloads but no data key/;
const OTHER = 'beta';

/** acme: events 1–2 without a payload, 3–5 with one; beta: 3 events, none with a payload. */
async function ledgerWithoutPayloadsFirst(t: import('ava').ExecutionContext, kind: 'sqlite' | 'postgres'): Promise<TestLedger> {
  const ledger = await openLedger(t, kind);
  const { context } = ledger;
  const bare = async (account: string, n: number) => {
    for (let i = 0; i < n; i++) {
      await context.store.transact((trx) => context.ledger.append(trx, {
        account_id: account, type: 'attempted', actor: 'prn_test', operation_id: `op_bare_${i}`, idempotency_key: `bare-${i}`,
        method: 'POST', route: '/v1/refunds', state: 'running',
      }));
    }
  };
  await bare(ACCOUNT, 2);
  await ledger.append(3);
  await bare(OTHER, 3);
  return ledger;
}

for (const kind of await storeKinds()) {
  test(`[${kind}] with --master-key, an account whose key row was deleted is TAMPERED at its first payload; one with no payload stays intact`, async (t) => {
    const ledger = await ledgerWithoutPayloadsFirst(t, kind);
    await ledger.context.store.db.deleteFrom('accounts').where('id', 'in', [ACCOUNT, OTHER]).execute();
    await ledger.close();
    const masterKey = ['--master-key', ledger.file('master.key')];

    const keyed = await verifyJson([...ledger.store.cliArgs, ...masterKey]);
    t.is(keyed.code, 1, keyed.stdout + keyed.stderr);
    const [acme, beta] = keyed.report!.accounts;
    t.like(acme, { account_id: ACCOUNT, events: 5, first_bad_seq: 3, shredded: false });
    t.regex(acme!.reason!, NO_KEY);
    t.deepEqual(beta, { account_id: OTHER, events: 3, checkpoints: 0, first_bad_seq: null, reason: null, shredded: false });
    const human = await runCli(['verify', ...ledger.store.cliArgs, ...masterKey]);
    t.regex(human.stdout, /^account acme: TAMPERED at seq 3: event 3: the account has sealed payloads but no data key/m);

    // Without the master key payloads are not opened: nothing to say about the key.
    const plain = await verifyJson(ledger.store.cliArgs);
    t.is(plain.code, 0, plain.stdout + plain.stderr);

    // The export of that ledger leaves both out of data_keys: the same verdicts from the file.
    const file = ledger.file('no-key.ndjson');
    t.is((await runCli(['export', ...ledger.store.cliArgs, '--out', file])).code, 0);
    const fromExport = await verifyJson([file, ...masterKey]);
    t.is(fromExport.code, 1, fromExport.stdout + fromExport.stderr);
    t.deepEqual(fromExport.report!.accounts.map((a) => [a.account_id, a.first_bad_seq]), [[ACCOUNT, 3], [OTHER, null]]);
    t.regex(fromExport.report!.accounts[0]!.reason!, NO_KEY);
  });
}

test('with --master-key, an export whose data_keys member (or whole data_keys) was removed is TAMPERED at the first payload', async (t) => {
  const ledger = await ledgerWithoutPayloadsFirst(t, 'sqlite');
  await ledger.close();
  const masterKey = ['--master-key', ledger.file('master.key')];
  const file = ledger.file('export.ndjson');
  t.is((await runCli(['export', ...ledger.store.cliArgs, '--out', file])).code, 0);
  t.is((await verifyJson([file, ...masterKey])).code, 0, 'the untouched export is intact');

  const [first, ...rest] = readLines(file);
  const header = JSON.parse(first!) as { data_keys: Record<string, string | null> };
  t.deepEqual(Object.keys(header.data_keys).sort(), [ACCOUNT, OTHER]);
  for (const edit of [
    (h: typeof header) => ({ ...h, data_keys: { [OTHER]: h.data_keys[OTHER]! } }),
    ({ data_keys: _, ...h }: typeof header) => h,
  ]) {
    writeLines(file, [JSON.stringify(edit(header)), ...rest]);
    const result = await verifyJson([file, ...masterKey]);
    t.is(result.code, 1, result.stdout + result.stderr);
    t.deepEqual(result.report!.accounts.map((a) => [a.account_id, a.first_bad_seq]), [[ACCOUNT, 3], [OTHER, null]]);
    t.regex(result.report!.accounts[0]!.reason!, NO_KEY);
    t.is((await verifyJson([file])).code, 0, 'without --master-key payloads are not opened');
  }
});
