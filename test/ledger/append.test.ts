import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] appends gapless seq and seals payloads so they read back`, async (t) => {
    const app = await startTestApp(t, kind);
    const { ledger, store } = app.context;
    const appended = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      store.transact((trx) => ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: 'prn_x', payload: { n: i } }))));
    t.deepEqual(appended.map((e) => e.seq).sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1));
    const first = appended.find((e) => e.seq === 1)!;
    const rows = await store.db.selectFrom('events').select(['seq', 'prev_hash', 'hash']).where('account_id', '=', 'acme').orderBy('seq').execute();
    t.is(rows[0]!.hash, first.hash);
    for (let i = 1; i < rows.length; i++) t.is(rows[i]!.prev_hash, rows[i - 1]!.hash);
    const payloads = await Promise.all(rows.map((r) => ledger.readPayload(store.db, 'acme', r.seq)));
    t.deepEqual(new Set(payloads.map((p) => (p as { n: number }).n)).size, 50);
  });

  test(`[${kind}] a unit that throws rolls back alone while its batch commits`, async (t) => {
    const app = await startTestApp(t, kind);
    const { ledger, store } = app.context;
    const results = await Promise.allSettled([
      store.transact((trx) => ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: null })),
      store.transact(async (trx) => {
        await ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: null });
        throw new Error('boom');
      }),
      store.transact((trx) => ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: null })),
    ]);
    t.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    const seqs = (await store.db.selectFrom('events').select('seq').where('account_id', '=', 'acme').orderBy('seq').execute()).map((r) => r.seq);
    t.deepEqual(seqs, [1, 2]);
  });
}
