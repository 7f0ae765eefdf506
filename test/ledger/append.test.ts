import test from 'ava';
import { openContext, type AppContext } from '../../src/context.js';
import { startTestApp } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';
import { storeKinds } from '../helpers/stores.js';

const appendTo = (context: AppContext, account: string) =>
  context.store.transact((trx) => context.ledger.append(trx, { account_id: account, type: 'attempted', actor: null, payload: { at: Date.now() } }));

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

  test(`[${kind}] concurrent appends from one instance write on the head they guessed, without reading it first`, async (t) => {
    // A clock on which every reading is more than a second after the last, so a missed guess never
    // pauses guessing (head-guesses.ts): every append after the first guesses, and what this test
    // counts is only whether the guess held. Under load a turn that times out misses once; with the
    // pause, that one miss turned the next second's appends into reads and failed the test by count.
    let ticks = 0;
    const app = await startTestApp(t, kind, { clock: { now: () => Date.now() + 2000 * ticks++ } });
    const { ledger } = app.context;
    await appendTo(app.context, 'acme'); // the first append to an account reads its head: nothing to guess from yet
    const before = { ...ledger.headWrites };
    // Waves of five at once. Each append in a wave waits for the one before it to commit (its turn,
    // then the row lock); a wave as deep as the pool (ten) made the last one wait nine commits, past
    // the turn's 200 ms bound whenever the machine's WAL flushes were slow (CI running other
    // PostgreSQL tests), and a turn that times out misses.
    const waves = 24;
    const appends = waves * 5;
    for (let wave = 0; wave < waves; wave++) await Promise.all(Array.from({ length: 5 }, () => appendTo(app.context, 'acme')));
    const guessed = ledger.headWrites.guessed - before.guessed;
    const missed = ledger.headWrites.guess_missed - before.guess_missed;
    t.log(`${guessed} of ${appends} on the guessed head, ${missed} guesses missed`);
    // On PostgreSQL each compare-and-set must wait for the head the previous transaction is
    // writing (chain-turns.ts, chain-write.ts). Without the turns, 5 to 24 of every 60 missed here
    // (the appends of a wave reach the database in any order); with them, none unless a turn timed out.
    t.is(guessed + missed, appends, 'every append after the first guessed');
    t.true(missed <= appends / 20, `${missed} of ${appends} appends missed their guessed head`);
    const rows = await app.context.store.db.selectFrom('events').select(['seq', 'prev_hash', 'hash']).where('account_id', '=', 'acme').orderBy('seq').execute();
    t.deepEqual(rows.map((r) => r.seq), Array.from({ length: appends + 1 }, (_, i) => i + 1));
    for (let i = 1; i < rows.length; i++) t.is(rows[i]!.prev_hash, rows[i - 1]!.hash);
    const metrics = await app.context.metrics.registry.getSingleMetricAsString('gatehouse_chain_head_writes_total');
    t.regex(metrics, new RegExp(`gatehouse_chain_head_writes_total\\{head="guessed"\\} ${ledger.headWrites.guessed}\\b`));
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

  test(`[${kind}] two instances taking turns on one account find each other's appends, and a rolled-back append is never built on`, async (t) => {
    const app = await startTestApp(t, kind);
    // A second instance on the same database: its own store connection(s) and its own remembered heads.
    const other = await openContext(app.store.config);
    try {
      const instances = [app.context, other];
      // In turns: every append after the first builds on a head the other instance has since moved.
      for (let i = 0; i < 10; i++) await appendTo(instances[i % 2]!, 'acme');
      // At once, from both.
      await Promise.all(Array.from({ length: 40 }, (_, i) => appendTo(instances[i % 2]!, 'acme')));
      // A transaction that appends and then fails leaves its instance remembering a head that never committed.
      await t.throwsAsync(app.context.store.transact(async (trx) => {
        await app.context.ledger.append(trx, { account_id: 'acme', type: 'attempted', actor: null });
        throw new Error('boom');
      }), { message: 'boom' });
      await appendTo(app.context, 'acme');
      await appendTo(other, 'acme');
    } finally {
      await other.close();
    }
    const rows = await app.context.store.db.selectFrom('events').select(['seq', 'prev_hash', 'hash']).where('account_id', '=', 'acme').orderBy('seq').execute();
    t.deepEqual(rows.map((r) => r.seq), Array.from({ length: 52 }, (_, i) => i + 1));
    for (let i = 1; i < rows.length; i++) t.is(rows[i]!.prev_hash, rows[i - 1]!.hash, `event ${i + 1} links to event ${i}`);
    const verify = await runCli(['verify', ...app.store.cliArgs]);
    t.is(verify.code, 0, verify.stdout + verify.stderr);
  });

  test(`[${kind}] a claim's operation and its attempted event are written together: a taken key writes neither and leaves the guessed head standing; a head another instance moved still gets both`, async (t) => {
    const app = await startTestApp(t, kind);
    const principal = (await app.context.principals.authenticate(await app.keyFor('acme', 'gateway')))!;
    const claim = (context: AppContext, key: string) =>
      context.operations.claim(principal, key, { method: 'POST', route: '/v1/tickets', command: { title: key } });
    const other = await openContext(app.store.config);
    const { headWrites } = app.context.ledger;
    try {
      t.is((await claim(app.context, 'k1')).outcome, 'created');
      // A retry: the insert meets the key and writes nothing; the `retried` event then builds on the same guess.
      const before = { ...headWrites };
      t.is((await claim(app.context, 'k1')).outcome, 'in_progress');
      t.deepEqual([headWrites.guessed - before.guessed, headWrites.guess_missed - before.guess_missed, headWrites.read - before.read], [1, 0, 0]);
      // Another instance moves the head: this one's guess misses, and the operation and its event still go in once.
      t.is((await claim(other, 'k2')).outcome, 'created');
      const beforeMiss = { ...headWrites };
      t.is((await claim(app.context, 'k3')).outcome, 'created');
      t.is(headWrites.guess_missed - beforeMiss.guess_missed, 1);
    } finally {
      await other.close();
    }
    const { db } = app.context.store;
    t.deepEqual((await db.selectFrom('operations').select('idempotency_key').where('account_id', '=', 'acme').orderBy('idempotency_key').execute()).map((r) => r.idempotency_key), ['k1', 'k2', 'k3']);
    const events = await db.selectFrom('events').select(['seq', 'type', 'idempotency_key']).where('account_id', '=', 'acme').orderBy('seq').execute();
    t.deepEqual(events.map((e) => `${e.seq} ${e.type} ${e.idempotency_key}`), ['1 attempted k1', '2 retried k1', '3 attempted k2', '4 attempted k3']);
    const verify = await runCli(['verify', ...app.store.cliArgs]);
    t.is(verify.code, 0, verify.stdout + verify.stderr);
  });

  test(`[${kind}] an account's first data key, made by a unit that rolled back, never seals a payload afterwards`, async (t) => {
    const app = await startTestApp(t, kind);
    const { ledger, store } = app.context;
    // The account's first append makes its data key and its row, then the unit fails: both are rolled back.
    await t.throwsAsync(store.transact(async (trx) => {
      await ledger.append(trx, { account_id: 'fresh', type: 'attempted', actor: null, payload: { n: 0 } });
      throw new Error('boom');
    }), { message: 'boom' });
    // Sealed right after, by the same instance, whose key cache must not hold the rolled-back key.
    await store.transact((trx) => ledger.append(trx, { account_id: 'fresh', type: 'attempted', actor: null, payload: { n: 1 } }));
    const account = await store.db.selectFrom('accounts').select('id').where('id', '=', 'fresh').executeTakeFirst();
    t.truthy(account, 'the account row and its wrapped data key were committed with the event they sealed');
    // Another instance has only the stored key: it must open the payload.
    const other = await openContext(app.store.config);
    try {
      t.deepEqual(await other.ledger.readPayload(other.store.db, 'fresh', 1), { n: 1 });
    } finally {
      await other.close();
    }
  });
}
