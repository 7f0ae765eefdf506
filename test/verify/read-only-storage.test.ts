import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import { VerificationRun } from '../../src/verify/run.js';
import { ledgerFileToOpen, openLedgerDb, restingWalFileOnReadOnlyStorage } from '../../src/verify/sqlite-file.js';
import { SqliteLedgerReader } from '../../src/verify/sqlite-reader.js';
import { SliceWorkers, verifySlices } from '../../src/verify/sqlite-slices.js';
import { keysFromDataDir } from '../../src/verify/trust.js';
import { readOnlyDir, readOnlyDirsAvailable } from '../helpers/read-only-dir.js';
import { runCli, tempDir } from '../helpers/server-process.js';
import { ACCOUNT, FLIP_FIRST_PAYLOAD_BYTE, closedLedger, tamperSqlite } from './ledger-fixture.js';

/**
 * A WAL-mode ledger file at rest (no -wal beside it: the service closed it, or `sqlite3 .backup`
 * wrote it) on read-only storage, where SQLite cannot make the -wal and -shm it needs to read a
 * WAL-mode file in place (src/verify/sqlite-file.ts).
 */

const EVENTS = 40;
// Slices on a worker thread even for 40 events.
const PARALLEL = { GATEHOUSE_VERIFY_THREADS: '2', GATEHOUSE_VERIFY_PARALLEL_MIN: '2', GATEHOUSE_VERIFY_SLICE: '6' };
const ro = readOnlyDirsAvailable() ? test : test.skip;

/** A closed ledger of 40 events (a WAL-mode file with no -wal beside it) and its keys. */
async function atRest(t: ExecutionContext) {
  const ledger = await closedLedger(t, EVENTS);
  const db = (ledger.store.config.store as { file: string }).file;
  t.false(fs.existsSync(`${db}-wal`), 'closed cleanly: no -wal');
  t.is(fs.readFileSync(db)[19], 2, 'a WAL-mode file');
  const copyInto = (dir: string, edit?: (db: BetterSqlite3.Database) => void) => {
    fs.copyFileSync(db, path.join(dir, 'gatehouse.db'));
    fs.copyFileSync(ledger.file('signing.key'), path.join(dir, 'signing.key'));
    if (edit) tamperSqlite(path.join(dir, 'gatehouse.db'), edit);
    for (const side of ['-wal', '-shm']) fs.rmSync(path.join(dir, `gatehouse.db${side}`), { force: true });
  };
  return { ledger, db, copyInto };
}

ro('verify --db of a WAL-mode file at rest on read-only storage reads a private copy: the same verdicts, nothing left behind', async (t) => {
  const { db, copyInto } = await atRest(t);
  const intact = readOnlyDir(t, (dir) => copyInto(dir));
  const tampered = readOnlyDir(t, (dir) => copyInto(dir, (d) => d.prepare(FLIP_FIRST_PAYLOAD_BYTE).run(17)));
  const tmp = tempDir('gatehouse-tmpdir-');
  t.teardown(tmp.cleanup);
  const verify = (dir: string, env: Record<string, string> = {}) =>
    runCli(['verify', '--db', path.join(dir, 'gatehouse.db'), '--data-dir', dir, '--master-key', path.join(path.dirname(db), 'master.key')], { env: { TMPDIR: tmp.dir, ...env } });

  const inPlace = await runCli(['verify', '--db', db, '--master-key', path.join(path.dirname(db), 'master.key')]);
  t.is(inPlace.code, 0, inPlace.stderr);
  for (const env of [{ GATEHOUSE_VERIFY_THREADS: '1' }, PARALLEL]) {
    const r = await verify(intact, env);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, inPlace.stdout);
    t.regex(r.stderr, /^gatehouse verify: .*gatehouse\.db is a WAL-mode SQLite file with no -wal beside it, on storage where SQLite cannot make one: reading a copy in .*gatehouse-verify-\w+, removed when verify ends\n/);
    const bad = await verify(tampered, env);
    t.is(bad.code, 1, bad.stderr);
    t.regex(bad.stdout, /^account acme: TAMPERED at seq 17: /);
    t.deepEqual(fs.readdirSync(tmp.dir), [], 'the copies are gone');
  }
  t.deepEqual(fs.readdirSync(intact).sort(), ['gatehouse.db', 'signing.key']);
});

ro('only a WAL-mode file with no -wal beside it, on storage where none can be made, is read from a copy', async (t) => {
  const { ledger, db, copyInto } = await atRest(t);
  const roDir = readOnlyDir(t, (dir) => {
    copyInto(dir);
    // A -wal beside it: a writer may have the file open, or the -wal holds transactions the file does not.
    fs.mkdirSync(path.join(dir, 'live'));
    copyInto(path.join(dir, 'live'));
    fs.writeFileSync(path.join(dir, 'live', 'gatehouse.db-wal'), '');
    // A rollback-journal file: SQLite reads it in place, read-only storage or not.
    fs.mkdirSync(path.join(dir, 'rollback'));
    copyInto(path.join(dir, 'rollback'));
    const rollback = new BetterSqlite3(path.join(dir, 'rollback', 'gatehouse.db'));
    rollback.pragma('journal_mode = DELETE');
    rollback.close();
  });
  const file = path.join(roDir, 'gatehouse.db');
  t.is(restingWalFileOnReadOnlyStorage(file), fs.realpathSync(file));
  const link = ledger.file('link.db');
  fs.symlinkSync(file, link);
  t.is(restingWalFileOnReadOnlyStorage(link), fs.realpathSync(file), 'a link in a writable directory: SQLite puts the -wal beside its target');
  t.is(restingWalFileOnReadOnlyStorage(path.join(roDir, 'live', 'gatehouse.db')), null);
  t.is(restingWalFileOnReadOnlyStorage(path.join(roDir, 'rollback', 'gatehouse.db')), null);
  t.is(restingWalFileOnReadOnlyStorage(db), null, 'writable storage: SQLite makes its -wal and -shm');
  t.is(restingWalFileOnReadOnlyStorage(path.join(roDir, 'no-such.db')), null, 'opening it will say why');
  const rollback = await runCli(['verify', '--db', path.join(roDir, 'rollback', 'gatehouse.db'), '--data-dir', roDir]);
  t.is(rollback.code, 0, rollback.stderr);
  t.notRegex(rollback.stderr, /reading a copy/);
  // Never copied: read in place, where SQLite cannot make the -shm it needs next to that -wal.
  const live = await runCli(['verify', '--db', path.join(roDir, 'live', 'gatehouse.db'), '--data-dir', roDir]);
  t.is(live.code, 2, live.stdout + live.stderr);
  t.notRegex(live.stderr, /reading a copy/);
  t.regex(live.stderr, /SQLITE_CANTOPEN/);
});

ro('the slice workers open what this thread opened: the copy, where the file itself cannot be read', async (t) => {
  const { copyInto } = await atRest(t);
  const dir = readOnlyDir(t, (d) => copyInto(d));
  const file = path.join(dir, 'gatehouse.db');
  const settings = { threads: 2, minEvents: 2, sliceEvents: 6, mainShare: 1, pageRows: 4, schedule: 'alternate' as const };
  const opened = ledgerFileToOpen(file);
  t.teardown(() => opened.release());
  t.not(opened.copy, null);
  const slices = async (workerFile: string) => {
    const reader = SqliteLedgerReader.open(file, { ...settings, threads: 1 });
    const run = new VerificationRun({ trustedKeys: keysFromDataDir(dir, reader.ledgerId), ledgerId: reader.ledgerId, given: [] });
    const own = openLedgerDb(opened.path);
    const workers = SliceWorkers.start(workerFile, settings.threads - 1)!;
    try {
      return await verifySlices({ workers, db: own, run, start: { accountId: ACCOUNT, checkpoints: [] }, maxSeq: EVENTS, dataKey: null, settings });
    } finally {
      await workers.terminate();
      run.finish();
      own.close();
      await reader.close();
    }
  };
  t.deepEqual(await slices(opened.path), { done: true }, 'the worker read its slices from the copy');
  // Opening the file itself, the worker cannot read it: this thread takes its own first slice (1..6), the worker's never comes.
  t.deepEqual(await slices(file), { done: false, after: 6 });
  opened.release();
  t.false(fs.existsSync(opened.copy!.dir));
});
