import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { EVENT_ROW_COLUMNS } from '../../src/core/event-shape.js';
import BetterSqlite3 from 'better-sqlite3';
import { type DataKey, NO_DATA_KEY, payloadOpener, unwrapForFastPath, withSodium } from '../../src/core/account-data-key.js';
import { checkEventRow, checkEventRowHexPayload, checkEventRowOfAccountHexPayload } from '../../src/core/event-hash.js';
import { sha256Hex } from '../../src/core/hash.js';
import type { VerifierCheckpoint } from '../../src/core/checkpoint-trust.js';
import { readSavedCheckpointFile } from '../../src/verify/saved-checkpoint-file.js';
import { readKeyFile } from '../../src/verify/key-file.js';
import { VerificationRun } from '../../src/verify/run.js';
import { SqliteLedgerReader } from '../../src/verify/sqlite-reader.js';
import { SliceWorkers, sliceBounds, verifySlices } from '../../src/verify/sqlite-slices.js';
import { EVENT_COLUMNS_HEX_PAYLOAD, EVENT_COLUMNS_OF_ACCOUNT, SLICE_ACCOUNT } from '../../src/verify/columns.js';
import { keysFromDataDir } from '../../src/verify/trust.js';
import { PAGE_ROWS } from '../../src/config/verify-tuning.js';
import { runCli } from '../helpers/server-process.js';
import { ACCOUNT, createLedger, rechain, tamperSqlite, type TestLedger } from './ledger-fixture.js';

/**
 * The parallel SQLite verify (src/verify/sqlite-slices.ts) forced on a 30-event ledger: slices
 * of 6 events (bounds after seq 6, 12, 18, 24) on 2 threads, so the main thread reads slices
 * 1..6, 13..18 and 25..30 itself and a worker thread checks 7..12 and 19..24: 7 and 19 are the
 * first of a worker slice, 10 and 22 in its middle, 12 and 24 its last, and 6|7, 12|13, 18|19
 * are boundaries. Every tamper must give the very report the single-thread path gives: same
 * exit code, same --json. Some cases run with 3 threads (two workers) too.
 */

const EVENTS = 30;
// The layout above is the 'alternate' schedule's (slice i on thread i mod 2), which puts a slice
// on a given thread; every case also runs the default 'shared' schedule (any thread takes the
// next slice), whose layout depends on timing, and must give the same report.
// Equal slices (mainShare 1) for the layout above; one case below makes this thread's smaller.
// Slices read their rows in pages (slice-check.ts sliceRows): pages of 4 put page boundaries
// inside slices (at 4, 10, 16, 22, 28: each page after the first starts again at the last row
// of the one before), pages of 1 at every row.
const PARALLEL = {
  GATEHOUSE_VERIFY_THREADS: '2', GATEHOUSE_VERIFY_PARALLEL_MIN: '2', GATEHOUSE_VERIFY_SLICE: '6', GATEHOUSE_VERIFY_MAIN_SHARE: '1',
  GATEHOUSE_VERIFY_PAGE: '4', GATEHOUSE_VERIFY_SCHEDULE: 'alternate',
};
const THREE = { ...PARALLEL, GATEHOUSE_VERIFY_THREADS: '3', GATEHOUSE_VERIFY_PAGE: '1' };
const SINGLE = { GATEHOUSE_VERIFY_THREADS: '1' };
/** Every column but the row's place (seq, account): what swapping two rows exchanges. */
const COLS = EVENT_ROW_COLUMNS.filter((c) => c !== 'seq' && c !== 'account_id').join(', ');

let base: Promise<{ ledger: TestLedger; db: string; cp10: string; cp30: string }> | undefined;

/** One ledger for the whole file (30 events, checkpoints at 10 and 30 stored and saved); each case edits a copy. */
function baseLedger(t: { teardown(fn: () => unknown): void }) {
  base ??= (async () => {
    const ledger = await createLedger('sqlite');
    await ledger.append(10);
    const cp10 = (await ledger.saveCheckpoint('cp-10.json')).file;
    await ledger.append(EVENTS - 10);
    const cp30 = (await ledger.saveCheckpoint('cp-30.json')).file;
    await ledger.close();
    return { ledger, db: (ledger.store.config.store as { file: string }).file, cp10, cp30 };
  })();
  void t;
  return base;
}

test.after.always(async () => {
  if (base) await (await base).ledger.store.drop();
});

let copies = 0;
async function copyOf(t: { teardown(fn: () => unknown): void }): Promise<{ db: string; dataDir: string; cp10: string; cp30: string; masterKey: string }> {
  const { ledger, db, cp10, cp30 } = await baseLedger(t);
  const file = path.join(ledger.store.dataDir, `copy-${process.pid}-${++copies}.db`);
  const source = new BetterSqlite3(db, { readonly: true });
  await source.backup(file);
  source.close();
  t.teardown(() => fs.rmSync(file, { force: true }));
  return { db: file, dataDir: ledger.store.dataDir, cp10, cp30, masterKey: ledger.file('master.key') };
}

async function both(t: import('ava').ExecutionContext, args: string[], parallelEnv: Record<string, string> = PARALLEL) {
  const run = async (env: Record<string, string>) => {
    const r = await runCli(['verify', ...args, '--json'], { env });
    return { code: r.code, report: r.stdout === '' ? null : JSON.parse(r.stdout), stderr: r.stderr };
  };
  const shared = { ...parallelEnv, GATEHOUSE_VERIFY_SCHEDULE: 'shared' };
  const [single, parallel, anyThread] = await Promise.all([run(SINGLE), run(parallelEnv), run(shared)]);
  for (const r of [parallel, anyThread]) {
    t.is(r.code, single.code, r.stderr);
    t.deepEqual(r.report, single.report);
  }
  return single;
}



function flipPayload(db: BetterSqlite3.Database, seq: number): void {
  const payload = db.prepare('SELECT payload FROM events WHERE account_id = ? AND seq = ?').pluck().get(ACCOUNT, seq) as Buffer;
  payload[payload.length - 3] ^= 0x01;
  db.prepare('UPDATE events SET payload = ? WHERE account_id = ? AND seq = ?').run(payload, ACCOUNT, seq);
}

function swap(db: BetterSqlite3.Database, a: number, b: number): void {
  const rowA = db.prepare(`SELECT ${COLS} FROM events WHERE account_id = ? AND seq = ?`).raw(true).get(ACCOUNT, a) as unknown[];
  const rowB = db.prepare(`SELECT ${COLS} FROM events WHERE account_id = ? AND seq = ?`).raw(true).get(ACCOUNT, b) as unknown[];
  const set = COLS.split(', ').map((c) => `${c} = ?`).join(', ');
  db.prepare(`UPDATE events SET ${set} WHERE account_id = ? AND seq = ?`).run(...rowB, ACCOUNT, a);
  db.prepare(`UPDATE events SET ${set} WHERE account_id = ? AND seq = ?`).run(...rowA, ACCOUNT, b);
}

test('the slices run on worker threads under ava: an intact ledger is taken whole, a tampered slice hands over where it stops', async (t) => {
  const { db, dataDir } = await copyOf(t);
  const settings = { threads: 2, minEvents: 2, sliceEvents: 6, mainShare: 1, pageRows: 4, schedule: 'alternate' as const };
  const slices = async (dataKey: DataKey | null = null) => {
    const reader = SqliteLedgerReader.open(db, settings);
    const run = new VerificationRun({ trustedKeys: keysFromDataDir(dataDir, reader.ledgerId), ledgerId: reader.ledgerId, given: [] });
    const own = new BetterSqlite3(db, { readonly: true });
    const workers = SliceWorkers.start(db, settings.threads - 1)!;
    try {
      return await verifySlices({ workers, db: own, run, start: { accountId: ACCOUNT, checkpoints: [] }, maxSeq: EVENTS, dataKey, settings });
    } finally {
      await workers.terminate();
      run.finish();
      own.close();
      await reader.close();
    }
  };
  t.deepEqual(await slices(), { done: true });
  // With the data key the workers open every payload too, and still take every row.
  const source = new BetterSqlite3(db, { readonly: true });
  const wrapped = source.prepare('SELECT wrapped_data_key FROM accounts WHERE id = ?').pluck().get(ACCOUNT) as Uint8Array;
  source.close();
  const dataKey = unwrapForFastPath(await withSodium(readKeyFile(path.join(dataDir, 'master.key'), 'master key')), ACCOUNT, wrapped) as DataKey | null; // a key row: never NO_DATA_KEY
  t.truthy(dataKey);
  t.deepEqual(await slices(dataKey), { done: true });
  t.deepEqual(await slices({ ...dataKey!, bytes: new Uint8Array(32).fill(1) }), { done: false, after: null }, 'a wrong data key: this thread refuses its first row');
  tamperSqlite(db, (d) => flipPayload(d, 21)); // in a worker's slice: handed over after 20
  t.deepEqual(await slices(), { done: false, after: 20 });
  tamperSqlite(db, (d) => flipPayload(d, 15)); // in a slice this thread checks: handed over after 14 too
  t.deepEqual(await slices(), { done: false, after: 14 });
});

test('a worker started early that fails before it is given slices (its file gone) hands everything to the reference path', async (t) => {
  const { db, dataDir } = await copyOf(t);
  const settings = { threads: 2, minEvents: 2, sliceEvents: 6, mainShare: 1, pageRows: 4, schedule: 'shared' as const };
  const reader = SqliteLedgerReader.open(db, settings);
  const run = new VerificationRun({ trustedKeys: keysFromDataDir(dataDir, reader.ledgerId), ledgerId: reader.ledgerId, given: [] });
  const own = new BetterSqlite3(db, { readonly: true });
  const workers = SliceWorkers.start(path.join(path.dirname(db), 'no-such.db'), 1)!;
  try {
    // Its 'error' (the file cannot be opened) arrives while nobody has given it work: noted, not thrown.
    await new Promise((resolve) => workers.workers[0]!.once('exit', resolve));
    t.true(workers.failed);
    t.deepEqual(await verifySlices({ workers, db: own, run, start: { accountId: ACCOUNT, checkpoints: [] }, maxSeq: EVENTS, dataKey: null, settings }), { done: false, after: null });
    t.is(run.currentAccount, ACCOUNT, 'the account is begun for the reference path all the same');
  } finally {
    await workers.terminate();
    run.finish();
    own.close();
    await reader.close();
  }
});

test('intact, with and without --master-key: the same report on both paths', async (t) => {
  const c = await copyOf(t);
  const plain = await both(t, ['--db', c.db, '--data-dir', c.dataDir]);
  t.is(plain.code, 0);
  t.is(plain.report.accounts[0].events, EVENTS);
  const keyed = await both(t, ['--db', c.db, '--data-dir', c.dataDir, '--master-key', c.masterKey, '--checkpoint', c.cp10]);
  t.is(keyed.code, 0);
  t.is((await both(t, ['--db', c.db, '--data-dir', c.dataDir, '--master-key', c.masterKey], THREE)).code, 0);
});

for (const seq of [1, 7, 10, 12, 15, 19, 22, 24, 30]) {
  test(`payload byte changed at seq ${seq}: same report on both paths`, async (t) => {
    const c = await copyOf(t);
    tamperSqlite(c.db, (db) => flipPayload(db, seq));
    const r = await both(t, ['--db', c.db, '--data-dir', c.dataDir, '--master-key', c.masterKey], seq % 2 === 0 ? THREE : PARALLEL);
    t.is(r.code, 1);
    t.is(r.report.accounts[0].first_bad_seq, seq);
  });

  test(`header field changed at seq ${seq}: same report on both paths`, async (t) => {
    const c = await copyOf(t);
    tamperSqlite(c.db, (db) => db.prepare("UPDATE events SET state = 'succeeded' WHERE account_id = ? AND seq = ?").run(ACCOUNT, seq));
    const r = await both(t, ['--db', c.db, '--data-dir', c.dataDir]);
    t.is(r.code, 1);
    t.is(r.report.accounts[0].first_bad_seq, seq);
  });
}

for (const seq of [1, 6, 7, 12, 13, 18, 19, 24, 30]) {
  test(`deleted event ${seq}: same report on both paths`, async (t) => {
    const c = await copyOf(t);
    tamperSqlite(c.db, (db) => db.prepare('DELETE FROM events WHERE account_id = ? AND seq = ?').run(ACCOUNT, seq));
    const r = await both(t, ['--db', c.db, '--data-dir', c.dataDir]);
    t.is(r.code, 1);
  });
}

for (const [a, b] of [[6, 7], [9, 10], [12, 13], [18, 19], [21, 22]] as const) {
  test(`events ${a} and ${b} swapped: same report on both paths`, async (t) => {
    const c = await copyOf(t);
    tamperSqlite(c.db, (db) => swap(db, a, b));
    const r = await both(t, ['--db', c.db, '--data-dir', c.dataDir]);
    t.is(r.code, 1);
    t.is(r.report.accounts[0].first_bad_seq, a);
  });
}

// Without the primary key (a file can be rewritten whole) two rows may share a seq: the
// single-thread path sees the second right after the first and reports it; a slice refuses it,
// and the reference path that takes over after the last row taken must see it too. When the
// first of the two ends a page (4, 10, 22 with pages of 4; any with pages of 1) the next page
// must return the second, not start after it.
for (const [seq, page] of [[4, '4'], [6, '4'], [10, '4'], [12, '4'], [22, '4'], [10, '1'], [12, '1'], [10, '256']] as const) {
  test(`a second row with seq ${seq}, pages of ${page}: same report on both paths`, async (t) => {
    const c = await copyOf(t);
    tamperSqlite(c.db, (db) => {
      db.exec(`CREATE TABLE loose AS SELECT * FROM events; DROP TABLE events; ALTER TABLE loose RENAME TO events;
        CREATE INDEX events_by_seq ON events (account_id, seq)`);
      db.prepare('INSERT INTO events SELECT * FROM events WHERE account_id = ? AND seq = ?').run(ACCOUNT, seq);
    });
    const r = await both(t, ['--db', c.db, '--data-dir', c.dataDir], { ...PARALLEL, GATEHOUSE_VERIFY_PAGE: page });
    t.is(r.code, 1);
    t.is(r.report.accounts[0].first_bad_seq, seq + 1);
    t.is(r.report.accounts[0].events, EVENTS + 1);
  });
}

// The slices do not read account_id: their query checks it, byte for byte whatever collation a
// rewritten schema gives the column. Here NOCASE, and the row at 10 (inside a worker's slice)
// or 30 (the last) says 'ACME', its hash still over 'acme': the single-thread path refuses it
// for its account; so must the parallel path, which would take it if the check used the bound
// id for a row the query matched under NOCASE, or skip it if the query left it out.
for (const seq of [10, 30]) {
  test(`account_id under a NOCASE collation, 'ACME' at seq ${seq}: refused on both paths`, async (t) => {
    const c = await copyOf(t);
    tamperSqlite(c.db, (db) => {
      const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'").pluck().get() as string;
      const nocase = sql.replace(/CREATE TABLE[^(]*\(/i, 'CREATE TABLE loose (').replace(/"account_id" text/i, '"account_id" text COLLATE NOCASE');
      t.not(nocase, sql);
      db.exec(`${nocase}; INSERT INTO loose SELECT * FROM events; DROP TABLE events; ALTER TABLE loose RENAME TO events;`);
      db.prepare("UPDATE events SET account_id = 'ACME' WHERE account_id = ? AND seq = ?").run(ACCOUNT, seq);
      t.is(db.prepare("SELECT COUNT(*) FROM events WHERE account_id = 'acme'").pluck().get(), EVENTS);
    });
    for (const env of [PARALLEL, THREE]) {
      const r = await both(t, ['--db', c.db, '--data-dir', c.dataDir], env);
      t.is(r.code, 1);
      t.is(r.report.accounts[0].first_bad_seq, seq);
    }
  });
}

test('a re-chained forgery from the middle of a slice: caught by the checkpoint, same report on both paths', async (t) => {
  const c = await copyOf(t);
  tamperSqlite(c.db, (db) => {
    db.prepare("UPDATE events SET route = '/v1/forged' WHERE account_id = ? AND seq = 15").run(ACCOUNT);
    rechain(db, 15);
  });
  const r = await both(t, ['--db', c.db, '--data-dir', c.dataDir]);
  t.is(r.code, 1);
  t.is(r.report.accounts[0].first_bad_seq, 30);
});

// Headers are hashed from bytes only while every value is plain printable ASCII
// (src/core/ascii-header-hash.ts); anything else goes through the string path or the reference
// path. Both must still catch an edit, and must accept a correctly re-chained row whatever its
// characters (the forgery is then caught only by the stored checkpoint at 10 or 30, on both paths alike).
for (const [seq, value] of [[10, '/v1/réfunds'], [15, '/v1/"quoted"'], [19, 'tab\there'], [22, 'del\u007f'], [24, '/v1/😀'], [7, 'back\\slash']] as const) {
  test(`route set to ${JSON.stringify(value)} at seq ${seq}: caught at ${seq}, and a re-chain of it only by a checkpoint, on both paths`, async (t) => {
    const edited = await copyOf(t);
    tamperSqlite(edited.db, (db) => db.prepare('UPDATE events SET route = ? WHERE account_id = ? AND seq = ?').run(value, ACCOUNT, seq));
    const r = await both(t, ['--db', edited.db, '--data-dir', edited.dataDir]);
    t.is(r.code, 1);
    t.is(r.report.accounts[0].first_bad_seq, seq);
    t.regex(r.report.accounts[0].reason, /header/);

    const rechained = await copyOf(t);
    tamperSqlite(rechained.db, (db) => {
      db.prepare('UPDATE events SET route = ? WHERE account_id = ? AND seq = ?').run(value, ACCOUNT, seq);
      rechain(db, seq);
    });
    const f = await both(t, ['--db', rechained.db, '--data-dir', rechained.dataDir]);
    t.is(f.code, 1);
    t.is(f.report.accounts[0].first_bad_seq, seq <= 10 ? 10 : 30); // the first stored checkpoint covering it
  });
}

// A header value stored as a BLOB of its own text's bytes, with every hash left as computed over
// that text: a plain BLOB, and one that is valid JSONB for the string (SQLite's JSON functions
// render that one as the string itself). Not text, so refused at its seq on both paths: a
// reader that let SQLite write the header would have to guard against it (BENCHMARKS.md,
// twentieth session).
for (const [seq, asBlob] of [[9, 'CAST(actor AS BLOB)'], [15, 'jsonb(json_quote(actor))']] as const) {
  test(`actor stored as ${asBlob} at seq ${seq}: refused at ${seq} on both paths`, async (t) => {
    const edited = await copyOf(t);
    tamperSqlite(edited.db, (db) => {
      const text = db.prepare('SELECT actor FROM events WHERE account_id = ? AND seq = ?').pluck().get(ACCOUNT, seq) as string;
      db.prepare(`UPDATE events SET actor = ${asBlob} WHERE account_id = ? AND seq = ?`).run(ACCOUNT, seq);
      t.is(db.prepare('SELECT typeof(actor) FROM events WHERE account_id = ? AND seq = ?').pluck().get(ACCOUNT, seq), 'blob');
      if (asBlob.startsWith('jsonb')) t.is(db.prepare('SELECT json_quote(actor) FROM events WHERE account_id = ? AND seq = ?').pluck().get(ACCOUNT, seq), JSON.stringify(text));
    });
    const r = await both(t, ['--db', edited.db, '--data-dir', edited.dataDir]);
    t.is(r.code, 1);
    t.is(r.report.accounts[0].first_bad_seq, seq);
  });
}

test('this thread\'s slices smaller than the workers\' (the default share): intact and tampered, same reports', async (t) => {
  // 30 events, slices of at most 8, this thread's half a worker's: this thread reads 1..3, 11..13
  // and 21..23, the worker 4..10, 14..20 and 24..30.
  t.deepEqual(sliceBounds(EVENTS, 2, { sliceEvents: 8, mainShare: 0.5 }).map((b) => b.upTo), [3, 10, 13, 20, 23, null]);
  const weighted = { ...PARALLEL, GATEHOUSE_VERIFY_SLICE: '8', GATEHOUSE_VERIFY_MAIN_SHARE: '0.5' };
  const c = await copyOf(t);
  t.is((await both(t, ['--db', c.db, '--data-dir', c.dataDir, '--master-key', c.masterKey], weighted)).code, 0);
  for (const seq of [3, 4, 13, 22, 25]) {
    const edited = await copyOf(t);
    tamperSqlite(edited.db, (db) => flipPayload(db, seq));
    const r = await both(t, ['--db', edited.db, '--data-dir', edited.dataDir], weighted);
    t.is(r.code, 1);
    t.is(r.report.accounts[0].first_bad_seq, seq);
  }
});

test('a cut-off tail caught by a saved checkpoint, a seq that is not a number, a data key row that does not unwrap: same reports', async (t) => {
  const tail = await copyOf(t);
  tamperSqlite(tail.db, (db) => {
    db.prepare('DELETE FROM events WHERE account_id = ? AND seq > 20').run(ACCOUNT);
    db.prepare('DELETE FROM checkpoints WHERE tree_size > 20').run();
  });
  t.is((await both(t, ['--db', tail.db, '--data-dir', tail.dataDir, '--checkpoint', tail.cp30])).code, 1);

  const text = await copyOf(t);
  tamperSqlite(text.db, (db) => db.prepare("UPDATE events SET seq = 'x' WHERE account_id = ? AND seq = 15").run(ACCOUNT));
  const r = await both(t, ['--db', text.db, '--data-dir', text.dataDir]);
  t.is(r.code, 1);
  t.is(r.report.accounts[0].first_bad_seq, 15);

  // The ledger's master key (another one is refused before any account is read: exit 2), with
  // the account's wrapped data key altered.
  const key = await copyOf(t);
  tamperSqlite(key.db, (db) => db.prepare(
    "UPDATE accounts SET wrapped_data_key = CAST((CASE WHEN substr(wrapped_data_key, 1, 1) = X'00' THEN X'01' ELSE X'00' END) || substr(wrapped_data_key, 2) AS BLOB) WHERE id = ?",
  ).run(ACCOUNT));
  t.is((await both(t, ['--db', key.db, '--data-dir', key.dataDir, '--master-key', key.masterKey])).code, 1);
});

test('an account with no key row under --master-key: TAMPERED at its first payload, inside a worker\'s slice, as single-thread; with no payload at all, taken whole and intact', async (t) => {
  /** Events 1..upTo lose their payload (and checkpoints, which that re-chaining breaks); then the key row goes. */
  const withoutPayloads = async (upTo: number) => {
    const c = await copyOf(t);
    tamperSqlite(c.db, (d) => {
      d.prepare('DELETE FROM checkpoints').run();
      d.prepare('UPDATE events SET payload = NULL, payload_hash = NULL WHERE account_id = ? AND seq <= ?').run(ACCOUNT, upTo);
      rechain(d, 1);
      d.prepare('DELETE FROM accounts WHERE id = ?').run(ACCOUNT);
    });
    return c;
  };
  // The first payload at 10: the middle of the worker's slice 7..12.
  const some = await withoutPayloads(9);
  const tampered = await both(t, ['--db', some.db, '--data-dir', some.dataDir, '--master-key', some.masterKey]);
  t.is(tampered.code, 1);
  t.is(tampered.report.accounts[0].first_bad_seq, 10);
  t.regex(tampered.report.accounts[0].reason, /^event 10: the account has sealed payloads but no data key/);
  t.is((await both(t, ['--db', some.db, '--data-dir', some.dataDir])).code, 0, 'without --master-key no payload is opened');

  const none = await withoutPayloads(EVENTS);
  const intact = await both(t, ['--db', none.db, '--data-dir', none.dataDir, '--master-key', none.masterKey]);
  t.is(intact.code, 0, intact.stderr);

  // The slices themselves: they refuse the first payload (the worker hands over after 9), and
  // take a log without one whole, on the fast path.
  const settings = { threads: 2, minEvents: 2, sliceEvents: 6, mainShare: 1, pageRows: 4, schedule: 'alternate' as const };
  const dataKey = unwrapForFastPath(await withSodium(readKeyFile(some.masterKey, 'master key')), ACCOUNT, undefined);
  t.is(dataKey, NO_DATA_KEY);
  for (const [db, expected] of [[some.db, { done: false, after: 9 }], [none.db, { done: true }]] as const) {
    const reader = SqliteLedgerReader.open(db, settings);
    const run = new VerificationRun({ trustedKeys: keysFromDataDir(some.dataDir, reader.ledgerId), ledgerId: reader.ledgerId, given: [] });
    const own = new BetterSqlite3(db, { readonly: true });
    const workers = SliceWorkers.start(db, settings.threads - 1)!;
    try {
      t.deepEqual(await verifySlices({ workers, db: own, run, start: { accountId: ACCOUNT, checkpoints: [] }, maxSeq: EVENTS, dataKey, settings }), expected);
    } finally {
      await workers.terminate();
      run.finish();
      own.close();
      await reader.close();
    }
  }
});

test('workers hash the Merkle subtrees of their slices: checkpoints inside worker slices, 37 events, same reports', async (t) => {
  // Its own ledger: 37 events (no power of two), checkpoints stored and saved at 9 and 21 (the
  // middle of the worker's slices 7..12 and 19..24 with slices of 6) and at 37 (the last event
  // of the worker's slice 31..37). Each must be compared at its size inside a worker's batch.
  const ledger = await createLedger('sqlite');
  t.teardown(() => ledger.store.drop());
  await ledger.append(9);
  const cp9 = (await ledger.saveCheckpoint('cp-9.json')).file;
  await ledger.append(12);
  const cp21 = (await ledger.saveCheckpoint('cp-21.json')).file;
  await ledger.append(16);
  await ledger.saveCheckpoint('cp-37.json');
  await ledger.close();
  const source = (ledger.store.config.store as { file: string }).file;
  const dataDir = ledger.store.dataDir;
  let n = 0;
  const copy = async () => {
    const file = path.join(dataDir, `sub-${process.pid}-${++n}.db`);
    const db = new BetterSqlite3(source, { readonly: true });
    await db.backup(file);
    db.close();
    t.teardown(() => fs.rmSync(file, { force: true }));
    return file;
  };
  const intact = await copy();
  // A given checkpoint's size is claimed too, from its note when it is bare note text.
  const bare = path.join(dataDir, 'cp-21.note');
  fs.writeFileSync(bare, (JSON.parse(fs.readFileSync(cp21, 'utf8')) as { note: string }).note);
  const withGiven = new VerificationRun({ trustedKeys: [], ledgerId: null, given: [readSavedCheckpointFile(cp9), readSavedCheckpointFile(bare)] });
  t.deepEqual(withGiven.claimedSizes({ accountId: ACCOUNT, checkpoints: [] }), [9, 21]);
  const ok = await both(t, ['--db', intact, '--data-dir', dataDir, '--checkpoint', cp9, '--checkpoint', cp21]);
  t.is(ok.code, 0);
  t.is(ok.report.accounts[0].events, 37);
  t.is(ok.report.accounts[0].checkpoints, 5);
  t.is((await both(t, ['--db', intact, '--data-dir', dataDir], THREE)).code, 0);
  // Re-chained forgeries inside worker slices: only a checkpoint at its size, in the same slice or the next one's, can catch them.
  for (const [seq, caught] of [[8, 9], [10, 21], [20, 21], [33, 37]] as const) {
    const db = await copy();
    tamperSqlite(db, (d) => {
      d.prepare("UPDATE events SET route = '/v1/forged' WHERE account_id = ? AND seq = ?").run(ACCOUNT, seq);
      rechain(d, seq);
    });
    for (const env of [PARALLEL, THREE]) {
      const r = await both(t, ['--db', db, '--data-dir', dataDir], env);
      t.is(r.code, 1);
      t.is(r.report.accounts[0].first_bad_seq, caught, `forged at ${seq}`);
      t.regex(r.report.accounts[0].reason, /Merkle root/);
    }
  }
  // In process: the workers' batches are taken whole (no hand-over to the reference path),
  // landing on every stored checkpoint's size; a forgery is a mismatch there, not a refusal.
  const inProcess = async (file: string, threads: number) => {
    const settings = { threads, minEvents: 2, sliceEvents: 6, mainShare: 1, pageRows: PAGE_ROWS, schedule: 'alternate' as const };
    const reader = SqliteLedgerReader.open(file, settings);
    const own = new BetterSqlite3(file, { readonly: true });
    const workers = SliceWorkers.start(file, threads - 1)!;
    try {
      const run = new VerificationRun({ trustedKeys: keysFromDataDir(dataDir, reader.ledgerId), ledgerId: reader.ledgerId, given: [] });
      const checkpoints = own.prepare('SELECT tree_size, root_hash, note FROM checkpoints WHERE account_id = ? ORDER BY tree_size').all(ACCOUNT) as VerifierCheckpoint[];
      t.deepEqual(checkpoints.map((c) => c.tree_size), [9, 21, 37]);
      const start = { accountId: ACCOUNT, checkpoints };
      // The slices are cut where the checkpoints claim a size, before any signature is checked.
      t.deepEqual(run.claimedSizes(start), [9, 21, 37]);
      const outcome = await verifySlices({ workers, db: own, run, start, maxSeq: 37, dataKey: null, settings });
      return { outcome, verdict: run.finish()[0]! };
    } finally {
      await workers.terminate();
      own.close();
      await reader.close();
    }
  };
  for (const threads of [2, 3]) {
    const whole = await inProcess(intact, threads);
    t.deepEqual(whole.outcome, { done: true });
    t.like(whole.verdict, { events: 37, checkpoints: 3, first_bad_seq: null });
    const forged = await copy();
    tamperSqlite(forged, (d) => {
      d.prepare("UPDATE events SET route = '/v1/forged' WHERE account_id = ? AND seq = 20").run(ACCOUNT);
      rechain(d, 20);
    });
    const caught = await inProcess(forged, threads);
    t.deepEqual(caught.outcome, { done: true });
    t.like(caught.verdict, { events: 37, first_bad_seq: 21 });
  }

  // A stored checkpoint whose signature fails: the slices are still cut at the size it claims
  // (cut before the signatures are checked), nothing waits there, the slices are taken whole,
  // and the report is the reference path's.
  const unsigned = await copy();
  tamperSqlite(unsigned, (d) => {
    const note = d.prepare('SELECT note FROM checkpoints WHERE account_id = ? AND tree_size = 21').pluck().get(ACCOUNT) as string;
    const at = note.length - 20; // inside the signature's base64
    const forged = note.slice(0, at) + (note[at] === 'A' ? 'B' : 'A') + note.slice(at + 1);
    d.prepare('UPDATE checkpoints SET note = ? WHERE account_id = ? AND tree_size = 21').run(forged, ACCOUNT);
  });
  for (const threads of [2, 3]) {
    const r = await inProcess(unsigned, threads);
    t.deepEqual(r.outcome, { done: true });
    t.like(r.verdict, { events: 37, checkpoints: 2, first_bad_seq: 21 });
    t.regex(r.verdict.reason!, /stored checkpoint at size 21/);
  }
  const unsignedReport = await both(t, ['--db', unsigned, '--data-dir', dataDir]);
  t.is(unsignedReport.code, 1);
  t.is(unsignedReport.report.accounts[0].first_bad_seq, 21);

  // A header edited inside a worker slice is still caught at its own seq.
  const edited = await copy();
  tamperSqlite(edited, (d) => d.prepare("UPDATE events SET state = 'succeeded' WHERE account_id = ? AND seq = 35").run(ACCOUNT));
  const r = await both(t, ['--db', edited, '--data-dir', dataDir]);
  t.is(r.code, 1);
  t.is(r.report.accounts[0].first_bad_seq, 35);
});

test('payloads read as hex text (the slices\' fast path) are accepted exactly where BLOB payloads are', async (t) => {
  const { db, dataDir } = await copyOf(t);
  const masterKey = readKeyFile(path.join(dataDir, 'master.key'), 'master key');
  // Every kind of payload a tampered file can hold, on rows 2..8 (row 1 keeps its own).
  tamperSqlite(db, (d) => {
    const set = d.prepare('UPDATE events SET payload = ? WHERE account_id = ? AND seq = ?');
    set.run('plain text', ACCOUNT, 2);
    set.run(42, ACCOUNT, 3);
    set.run(Buffer.alloc(0), ACCOUNT, 4);
    set.run(null, ACCOUNT, 5);
    set.run(4.5, ACCOUNT, 6);
    flipPayload(d, 7);
    d.prepare("UPDATE events SET payload = CAST(payload AS TEXT) WHERE account_id = ? AND seq = 8").run(ACCOUNT);
    // An empty BLOB whose payload_hash is that of 0 bytes, and a NULL payload with no hash: both taken.
    set.run(Buffer.alloc(0), ACCOUNT, 9);
    d.prepare('UPDATE events SET payload_hash = ? WHERE account_id = ? AND seq = 9').run(sha256Hex(new Uint8Array(0)), ACCOUNT);
    set.run(null, ACCOUNT, 10);
    d.prepare('UPDATE events SET payload_hash = NULL WHERE account_id = ? AND seq = 10').run(ACCOUNT);
    // Text where the BLOB belongs and no payload_hash: refused on both (not taken as "no payload").
    set.run('sneaky', ACCOUNT, 11);
    d.prepare('UPDATE events SET payload_hash = NULL WHERE account_id = ? AND seq = 11').run(ACCOUNT);
    // Not plain ASCII: the slices' row without account_id takes the general check on the full row.
    d.prepare("UPDATE events SET route = '/v1/réfunds' WHERE account_id = ? AND seq = 12").run(ACCOUNT);
    rechain(d, 9);
  });
  const source = new BetterSqlite3(db, { readonly: true });
  t.teardown(() => source.close());
  const wrapped = source.prepare('SELECT wrapped_data_key FROM accounts WHERE id = ?').pluck().get(ACCOUNT) as Uint8Array;
  const dataKey = unwrapForFastPath(await withSodium(masterKey), ACCOUNT, wrapped) as DataKey;
  const asBlob = source.prepare(`SELECT ${EVENT_ROW_COLUMNS.join(', ')} FROM events WHERE account_id = ? ORDER BY seq`).raw(true).all(ACCOUNT) as unknown[][];
  const asHex = source.prepare(`SELECT ${EVENT_COLUMNS_HEX_PAYLOAD} FROM events WHERE account_id = ? ORDER BY seq`).raw(true).all(ACCOUNT) as unknown[][];
  t.is(asHex.length, EVENTS);
  // The slices' rows: no account_id column (the query matched it).
  const ofAccount = source.prepare(`SELECT ${EVENT_COLUMNS_OF_ACCOUNT} FROM events WHERE ${SLICE_ACCOUNT} ORDER BY seq`).raw(true).all({ account: ACCOUNT }) as unknown[][];
  t.is(ofAccount.length, EVENTS);
  t.is(ofAccount[0]!.length, EVENT_ROW_COLUMNS.length - 1);
  const accepted = { without: [] as number[], with: [] as number[] };
  for (const opens of [null, payloadOpener(dataKey, ACCOUNT)]) {
    for (let i = 0; i < EVENTS; i++) {
      // Each row against its own stored link, so a refusal is about the row itself.
      const prev = asBlob[i]![15] as string;
      const blob = checkEventRow(asBlob[i]!, i + 1, prev, ACCOUNT, opens);
      const hex = checkEventRowHexPayload(asHex[i]!, i + 1, prev, ACCOUNT, opens);
      t.is(hex, blob, `seq ${i + 1}, ${opens === null ? 'without' : 'with'} the data key`);
      t.is(checkEventRowOfAccountHexPayload(ofAccount[i]!, i + 1, prev, ACCOUNT, opens), blob, `seq ${i + 1}, no account_id column`);
      if (hex !== null) accepted[opens === null ? 'without' : 'with'].push(i + 1);
    }
  }
  const all = Array.from({ length: EVENTS }, (_, i) => i + 1);
  // 2..8 refused on both; 9 (an empty BLOB with the empty payload's hash) and 10 (no payload,
  // no hash), re-chained, taken by both — 9 only without the data key: 0 bytes do not open;
  // 11 (text, no hash) refused on both.
  t.deepEqual(accepted.without, all.filter((s) => s < 2 || (s > 8 && s !== 11)));
  t.deepEqual(accepted.with, all.filter((s) => s < 2 || (s > 9 && s !== 11)));
});
