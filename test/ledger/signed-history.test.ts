// §7: "No checkpoint is ever signed that is inconsistent with an earlier one." The root a
// checkpoint signs comes from the chain's Merkle frontier (chains.frontier); damaged in the
// database, it was loaded after a restart and signed, and verify then called untouched events
// tampered. Now the root is checked against the log's own stored hashes before it is signed.
import crypto from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { storeKinds, type StoreKind } from '../helpers/stores.js';
import { ACCOUNT, openLedger, verifyJson, type TestLedger } from '../verify/ledger-fixture.js';

const kinds = await storeKinds();

/** Replaces the frontier's first hash with random bytes, as a damaged row would hold. */
async function damageFrontier(ledger: TestLedger): Promise<void> {
  const { frontier } = await ledger.context.store.db.selectFrom('chains').select('frontier').where('account_id', '=', ACCOUNT).executeTakeFirstOrThrow();
  const hashes = JSON.parse(frontier) as string[];
  hashes[0] = crypto.randomBytes(32).toString('hex');
  await ledger.context.store.db.updateTable('chains').set({ frontier: JSON.stringify(hashes) }).where('account_id', '=', ACCOUNT).execute();
}

async function checkpointSizes(ledger: TestLedger): Promise<number[]> {
  const rows = await ledger.context.store.db.selectFrom('checkpoints').select('tree_size').where('account_id', '=', ACCOUNT).orderBy('tree_size').execute();
  return rows.map((r) => Number(r.tree_size));
}

/** `n` events, then a checkpoint signed at that size. */
const signedAt = (n: number) => async (ledger: TestLedger) => {
  await ledger.append(n);
  await ledger.context.ledger.checkpoint(ACCOUNT);
};

/** A ledger made by `before`, closed and opened again as a restart does (its frontier then comes from the database). */
async function restartedLedger(t: ExecutionContext, kind: StoreKind, before: (ledger: TestLedger) => Promise<void>): Promise<TestLedger> {
  const ledger = await openLedger(t, kind);
  await before(ledger);
  await ledger.close();
  const restarted = await ledger.reopen();
  t.teardown(() => restarted.close());
  return restarted;
}

for (const kind of kinds) {
  test(`[${kind}] a damaged frontier loaded after a restart is not signed: the checkpoint fails, nothing inconsistent is stored, verify stays intact`, async (t) => {
    const restarted = await restartedLedger(t, kind, async (ledger) => {
      await signedAt(5)(ledger);
      await ledger.append(2);
    });
    await damageFrontier(restarted);
    await restarted.append(2); // the damaged frontier is loaded and carried on
    const refused = await t.throwsAsync(() => restarted.context.ledger.checkpoint(ACCOUNT));
    t.regex(refused!.message, /not consistent with the checkpoint signed at size 5; not signing/);
    t.deepEqual(await checkpointSizes(restarted), [5], 'no checkpoint at size 9 was stored');
    await restarted.close();
    const report = await verifyJson(restarted.store.cliArgs);
    t.is(report.code, 0, report.stderr);
    t.true(report.report!.ok);
    t.deepEqual(report.report!.accounts.map((a) => [a.events, a.first_bad_seq]), [[9, null]], 'every event intact; the damaged row is not an event');
  });

  test(`[${kind}] the checkpoint an append signs (every 1000 events) is checked too: a damaged frontier fails that append, and signs nothing`, async (t) => {
    const restarted = await restartedLedger(t, kind, signedAt(5));
    await damageFrontier(restarted);
    const refused = await t.throwsAsync(() => restarted.append(1000));
    t.regex(refused!.message, /not consistent with the checkpoint signed at size 5; not signing/);
    t.deepEqual(await checkpointSizes(restarted), [5]);
    const { size } = await restarted.context.store.db.selectFrom('chains').select('size').where('account_id', '=', ACCOUNT).executeTakeFirstOrThrow();
    t.is(Number(size), 1004, 'the append that was due to sign was not written');
  });

  test(`[${kind}] before any checkpoint, the first one is checked against the root of the stored events`, async (t) => {
    const restarted = await restartedLedger(t, kind, (ledger) => ledger.append(3));
    await damageFrontier(restarted);
    const refused = await t.throwsAsync(() => restarted.context.ledger.checkpoint(ACCOUNT));
    t.regex(refused!.message, /does not give the root of its stored events; not signing/);
    t.deepEqual(await checkpointSizes(restarted), []);
  });

  test(`[${kind}] an undamaged chain signs as before, across a restart, past stored subtrees and an append that signs`, async (t) => {
    const restarted = await restartedLedger(t, kind, signedAt(3));
    await restarted.append(1300); // the append of event 1003 signs (checked once), then 1300 more
    const checkpoint = await restarted.context.ledger.checkpoint(ACCOUNT);
    t.is(Number(checkpoint.tree_size), 1303);
    t.deepEqual(await checkpointSizes(restarted), [3, 1003, 1303]);
  });
}
