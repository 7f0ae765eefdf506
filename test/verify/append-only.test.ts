import test from 'ava';
import { sql } from 'kysely';
import { storeKinds } from '../helpers/stores.js';
import { ACCOUNT, openLedger } from './ledger-fixture.js';

/** The second wall behind the code: the database itself refuses to rewrite history. */
for (const kind of await storeKinds()) {
  test(`[${kind}] UPDATE and DELETE on events and checkpoints are refused by the database, and nothing changes`, async (t) => {
    const ledger = await openLedger(t, kind);
    await ledger.append(3);
    await ledger.saveCheckpoint('cp.json');
    const db = ledger.context.store.db;
    const before = await db.selectFrom('events').selectAll().orderBy('seq').execute();

    const attempts = [
      () => db.updateTable('events').set({ route: '/v1/forged' }).where('seq', '=', 2).execute(),
      () => db.deleteFrom('events').where('seq', '=', 3).execute(),
      () => db.deleteFrom('events').execute(),
      () => db.updateTable('checkpoints').set({ root_hash: '00' }).execute(),
      () => db.deleteFrom('checkpoints').execute(),
      () => sql`UPDATE events SET hash = prev_hash`.execute(db),
    ];
    for (const attempt of attempts) {
      // better-sqlite3's SqliteError is not an Error subclass ava recognises, so catch it by hand.
      const error = await attempt().then(() => null, (e: unknown) => e as { message: string });
      t.truthy(error, 'the database accepted a rewrite of history');
      t.regex(error!.message, /append-only/);
    }
    t.deepEqual(await db.selectFrom('events').selectAll().orderBy('seq').execute(), before);
    t.is((await db.selectFrom('checkpoints').select('tree_size').where('account_id', '=', ACCOUNT).execute()).length, 1);
  });
}
