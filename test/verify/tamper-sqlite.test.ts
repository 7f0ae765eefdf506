import fs from 'node:fs';
import test from 'ava';
import { EVENT_ROW_COLUMNS } from '../../src/core/event-shape.js';
import { runCli } from '../helpers/server-process.js';
import { ACCOUNT, openLedger, rechain, tamperSqlite, verifyJson, type TestLedger } from './ledger-fixture.js';

/** The tamper matrix of issue 2 on a SQLite file, through the real `gatehouse verify --db`. */

async function tenEvents(t: { teardown(fn: () => unknown): void }): Promise<TestLedger & { db: string }> {
  const ledger = await openLedger(t);
  await ledger.append(10);
  return Object.assign(ledger, { db: ledger.store.config.store.kind === 'sqlite' ? ledger.store.config.store.file : '' });
}

function verifyDb(ledger: TestLedger & { db: string }, ...extra: string[]) {
  return verifyJson(['--db', ledger.db, '--data-dir', ledger.store.dataDir, ...extra]);
}



test('an intact SQLite ledger verifies: exit 0, every event and checkpoint counted', async (t) => {
  const ledger = await tenEvents(t);
  await ledger.saveCheckpoint('cp.json');
  await ledger.close();
  const result = await verifyDb(ledger, '--master-key', ledger.file('master.key'));
  t.is(result.code, 0, result.stderr);
  t.deepEqual(result.report, {
    ok: true,
    accounts: [{ account_id: ACCOUNT, events: 10, checkpoints: 1, first_bad_seq: null, reason: null, shredded: false }],
  });
  t.regex(result.stderr, /not pinned/);
});

test('one byte of one payload changed: exit 1 at that seq', async (t) => {
  const ledger = await tenEvents(t);
  await ledger.close();
  tamperSqlite(ledger.db, (db) => {
    const payload = db.prepare('SELECT payload FROM events WHERE account_id = ? AND seq = 4').pluck().get(ACCOUNT) as Buffer;
    payload[payload.length - 3] ^= 0x01;
    db.prepare('UPDATE events SET payload = ? WHERE account_id = ? AND seq = 4').run(payload, ACCOUNT);
  });
  const result = await verifyDb(ledger);
  t.is(result.code, 1);
  t.is(result.report!.accounts[0]!.first_bad_seq, 4);
  t.regex(result.report!.accounts[0]!.reason!, /payload/);
});

test('the human report names the account and the seq on stdout', async (t) => {
  const ledger = await tenEvents(t);
  await ledger.close();
  tamperSqlite(ledger.db, (db) => db.prepare("UPDATE events SET route = '/v1/other' WHERE account_id = ? AND seq = 6").run(ACCOUNT));
  const result = await runCli(['verify', '--db', ledger.db, '--data-dir', ledger.store.dataDir]);
  t.is(result.code, 1);
  t.regex(result.stdout, /^account acme: TAMPERED at seq 6: .+$/m);
});

test('one header field changed: exit 1 at that seq', async (t) => {
  const ledger = await tenEvents(t);
  await ledger.close();
  tamperSqlite(ledger.db, (db) => db.prepare("UPDATE events SET state = 'succeeded' WHERE account_id = ? AND seq = 6").run(ACCOUNT));
  const result = await verifyDb(ledger);
  t.is(result.code, 1);
  t.is(result.report!.accounts[0]!.first_bad_seq, 6);
  t.regex(result.report!.accounts[0]!.reason!, /header/);
});

test('a deleted middle event: exit 1 at the missing seq', async (t) => {
  const ledger = await tenEvents(t);
  await ledger.close();
  tamperSqlite(ledger.db, (db) => db.prepare('DELETE FROM events WHERE account_id = ? AND seq = 5').run(ACCOUNT));
  const result = await verifyDb(ledger);
  t.is(result.code, 1);
  t.is(result.report!.accounts[0]!.first_bad_seq, 5);
  t.regex(result.report!.accounts[0]!.reason!, /missing/);
});

test('a deleted tail with the stored checkpoints deleted too passes alone, and is caught by an earlier saved --checkpoint', async (t) => {
  const ledger = await tenEvents(t);
  const { file } = await ledger.saveCheckpoint('cp-10.json');
  await ledger.close();
  tamperSqlite(ledger.db, (db) => {
    db.prepare('DELETE FROM events WHERE account_id = ? AND seq > 7').run(ACCOUNT);
    db.prepare('DELETE FROM checkpoints').run();
    db.prepare('UPDATE chains SET size = 7').run();
  });
  // Honest: a clean cut of the tail leaves a valid shorter chain; only a checkpoint kept elsewhere shows it.
  const alone = await verifyDb(ledger);
  t.is(alone.code, 0);
  const result = await verifyDb(ledger, '--checkpoint', file);
  t.is(result.code, 1);
  t.is(result.report!.accounts[0]!.first_bad_seq, 8);
  t.regex(result.report!.accounts[0]!.reason!, /cut off or rolled back/);
});

test('a deleted tail is caught by the stored checkpoint that covers it', async (t) => {
  const ledger = await tenEvents(t);
  await ledger.saveCheckpoint('cp-10.json');
  await ledger.close();
  tamperSqlite(ledger.db, (db) => db.prepare('DELETE FROM events WHERE account_id = ? AND seq > 8').run(ACCOUNT));
  const result = await verifyDb(ledger);
  t.is(result.code, 1);
  t.is(result.report!.accounts[0]!.first_bad_seq, 9);
});

test('two events swapped: exit 1 at the first of them', async (t) => {
  const ledger = await tenEvents(t);
  await ledger.close();
  tamperSqlite(ledger.db, (db) => {
    const cols = EVENT_ROW_COLUMNS.filter((c) => c !== 'seq' && c !== 'account_id').join(', ');
    const a = db.prepare(`SELECT ${cols} FROM events WHERE account_id = ? AND seq = 3`).raw(true).get(ACCOUNT) as unknown[];
    const b = db.prepare(`SELECT ${cols} FROM events WHERE account_id = ? AND seq = 4`).raw(true).get(ACCOUNT) as unknown[];
    const set = cols.split(', ').map((c) => `${c} = ?`).join(', ');
    db.prepare(`UPDATE events SET ${set} WHERE account_id = ? AND seq = 3`).run(...b, ACCOUNT);
    db.prepare(`UPDATE events SET ${set} WHERE account_id = ? AND seq = 4`).run(...a, ACCOUNT);
  });
  const result = await verifyDb(ledger);
  t.is(result.code, 1);
  t.is(result.report!.accounts[0]!.first_bad_seq, 3);
});

test('a rollback of the whole file to an earlier copy is caught by a later saved checkpoint', async (t) => {
  const ledger = await tenEvents(t);
  const copy = ledger.file('earlier.db');
  // A consistent copy through SQLite's backup API (the live file has a WAL beside it).
  const { default: Sqlite } = await import('better-sqlite3');
  const source = new Sqlite(ledger.db, { readonly: true });
  await source.backup(copy);
  source.close();
  await ledger.append(5);
  const { file } = await ledger.saveCheckpoint('cp-15.json');
  await ledger.close();
  fs.copyFileSync(copy, ledger.db);
  for (const suffix of ['-wal', '-shm']) fs.rmSync(ledger.db + suffix, { force: true });
  const alone = await verifyDb(ledger);
  t.is(alone.code, 0, 'the earlier copy is a valid ledger on its own');
  const result = await verifyDb(ledger, '--checkpoint', file);
  t.is(result.code, 1);
  t.is(result.report!.accounts[0]!.first_bad_seq, 11);
});

test('a re-chained forgery (every hash recomputed after an edit) is caught by the stored checkpoint signature', async (t) => {
  const ledger = await openLedger(t);
  await ledger.append(4);
  await ledger.saveCheckpoint('cp-4.json');
  await ledger.append(6);
  await ledger.saveCheckpoint('cp-10.json');
  await ledger.close();
  const db = (ledger.store.config.store as { file: string }).file;
  tamperSqlite(db, (sqlite) => {
    sqlite.prepare("UPDATE events SET route = '/v1/forged' WHERE account_id = ? AND seq = 6").run(ACCOUNT);
    rechain(sqlite, 6);
  });
  const result = await verifyJson(['--db', db, '--data-dir', ledger.store.dataDir]);
  t.is(result.code, 1);
  const verdict = result.report!.accounts[0]!;
  // The root shows that the first 10 events are not what was signed; the checkpoint at 4 still
  // matches, so the reason narrows the edit down to seq 5..10.
  t.is(verdict.first_bad_seq, 10);
  t.regex(verdict.reason!, /Merkle root at size 10 differs.*seq 5\.\.10/);
});

test('a re-chained forgery with the stored checkpoints deleted is caught by the saved --checkpoint', async (t) => {
  const ledger = await tenEvents(t);
  const { file } = await ledger.saveCheckpoint('cp-10.json');
  await ledger.close();
  tamperSqlite(ledger.db, (db) => {
    db.prepare("UPDATE events SET route = '/v1/forged' WHERE account_id = ? AND seq = 2").run(ACCOUNT);
    rechain(db, 2);
    db.prepare('DELETE FROM checkpoints').run();
  });
  t.is((await verifyDb(ledger)).code, 0, 'without the saved checkpoint the forgery is a valid chain');
  const result = await verifyDb(ledger, '--checkpoint', file);
  t.is(result.code, 1);
  t.is(result.report!.accounts[0]!.first_bad_seq, 10);
  t.regex(result.report!.accounts[0]!.reason!, /given checkpoint/);
});

test('a stored checkpoint re-signed by a key that is not trusted: exit 1', async (t) => {
  const ledger = await tenEvents(t);
  const { checkpoint } = await ledger.saveCheckpoint('cp-10.json');
  await ledger.close();
  const { signNote } = await import('../../src/core/note.js');
  const { signingKeyFromSeed } = await import('../../src/core/signing-key.js');
  const forger = signingKeyFromSeed(new Uint8Array(32).fill(7), `gatehouse/${ledger.context.ledgerId}`);
  const body = checkpoint.note.slice(0, checkpoint.note.indexOf('\n\n') + 1);
  tamperSqlite(ledger.db, (db) => db.prepare('UPDATE checkpoints SET note = ?').run(signNote(body, forger)));
  const result = await verifyDb(ledger);
  t.is(result.code, 1);
  t.regex(result.report!.accounts[0]!.reason!, /trusted key|bad signature/);
  // reported at the checkpoint's tree size, so the line names a seq (docs/cli.md#gatehouse-verify)
  t.is(result.report!.accounts[0]!.first_bad_seq, 10);
  const text = await runCli(['verify', '--db', ledger.db, '--data-dir', ledger.store.dataDir]);
  t.is(text.code, 1);
  t.regex(text.stdout, /^account acme: TAMPERED at seq 10: stored checkpoint at size 10 (is not signed by a trusted key|has a bad signature)/m);
});
