import fs from 'node:fs';
import test from 'ava';
import { storeKinds } from '../helpers/stores.js';
import { ACCOUNT, openLedger, verifyJson } from './ledger-fixture.js';

/**
 * verify --master-key against the check value the ledger recorded for its master key: another
 * key is a mistake in the command (exit 2), the right key with a key row that does not unwrap
 * is tampering (exit 1).
 */
for (const kind of await storeKinds()) {
  test(`[${kind}] a master key that is not the ledger's is a usage error: exit 2, one line, no verdict`, async (t) => {
    const ledger = await openLedger(t, kind);
    await ledger.append(3);
    await ledger.close();
    const wrong = ledger.file('other.key');
    fs.writeFileSync(wrong, Buffer.alloc(32, 1).toString('base64') + '\n');
    const bad = await verifyJson([...ledger.store.cliArgs, '--master-key', wrong]);
    t.is(bad.code, 2, bad.stdout + bad.stderr);
    t.is(bad.stdout, '', 'no account is reported tampered');
    t.regex(bad.stderr, new RegExp(`^gatehouse verify: --master-key ${wrong} is not this ledger's master key \\(.+\\): pass the master\\.key`, 'm'));
    const good = await verifyJson([...ledger.store.cliArgs, '--master-key', ledger.file('master.key')]);
    t.is(good.code, 0, good.stderr);
  });

  test(`[${kind}] with the ledger's master key, an account whose key row was altered is TAMPERED (exit 1)`, async (t) => {
    const ledger = await openLedger(t, kind);
    await ledger.append(3);
    const db = ledger.context.store.db;
    const row = await db.selectFrom('accounts').select('wrapped_data_key').where('id', '=', ACCOUNT).executeTakeFirstOrThrow();
    const altered = Buffer.from(row.wrapped_data_key!);
    altered[altered.length - 1]! ^= 0x01;
    await db.updateTable('accounts').set({ wrapped_data_key: altered }).where('id', '=', ACCOUNT).execute();
    await ledger.close();
    const result = await verifyJson([...ledger.store.cliArgs, '--master-key', ledger.file('master.key')]);
    t.is(result.code, 1, result.stderr);
    t.is(result.report!.accounts[0]!.first_bad_seq, 1);
    t.regex(result.report!.accounts[0]!.reason!, /data key does not unwrap/);
  });
}
