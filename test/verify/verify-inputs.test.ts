import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { runCli } from '../helpers/server-process.js';
import { storeKinds } from '../helpers/stores.js';
import { ACCOUNT, openLedger, tamperSqlite, verifyJson, type TestLedger } from './ledger-fixture.js';

/** A closed SQLite ledger of three events and a saved checkpoint, dropped after the test. */
async function closedLedger(t: ExecutionContext): Promise<TestLedger> {
  const ledger = await openLedger(t);
  await ledger.append(3);
  await ledger.saveCheckpoint('cp.json');
  await ledger.close();
  return ledger;
}

/** What verify does with input it cannot read (exit 2), and with a PostgreSQL database. */

const kinds = await storeKinds();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-verify-'));
test.after.always(() => fs.rmSync(scratch, { recursive: true, force: true }));

const noStack = /\n\s+at .+:\d+/;

test('verify with no input is a usage error: exit 2, no default input', async (t) => {
  const result = await runCli(['verify']);
  t.is(result.code, 2);
  t.regex(result.stderr, /exactly one input/);
  t.is(result.stdout, '');
});

test('verify with two inputs is a usage error: exit 2', async (t) => {
  const result = await runCli(['verify', '--db', 'a.db', path.join(scratch, 'x.ndjson')]);
  t.is(result.code, 2);
});

test('verify of a missing SQLite file: exit 2 with a clear message and no stack', async (t) => {
  const result = await runCli(['verify', '--db', path.join(scratch, 'nothing.db'), '--data-dir', scratch]);
  t.is(result.code, 2);
  t.regex(result.stderr, /cannot open .*nothing\.db/);
  t.notRegex(result.stderr, noStack);
});

test('verify of a missing export file: exit 2', async (t) => {
  const result = await runCli(['verify', path.join(scratch, 'nothing.ndjson')]);
  t.is(result.code, 2);
  t.regex(result.stderr, /ENOENT/);
});

test('verify --db of a garbage file: exit 2, not a SQLite database', async (t) => {
  const file = path.join(scratch, 'garbage.db');
  fs.writeFileSync(file, Buffer.alloc(8192, 0x5a));
  const result = await runCli(['verify', '--db', file, '--data-dir', scratch]);
  t.is(result.code, 2);
  t.regex(result.stderr, /not a readable SQLite database/);
  t.notRegex(result.stderr, noStack);
});

test('verify --db of a SQLite file that is not a Gatehouse ledger: exit 2', async (t) => {
  const { default: Sqlite } = await import('better-sqlite3');
  const file = path.join(scratch, 'other.db');
  const db = new Sqlite(file);
  db.exec('CREATE TABLE things (id INTEGER)');
  db.close();
  const result = await runCli(['verify', '--db', file, '--data-dir', scratch]);
  t.is(result.code, 2);
  t.regex(result.stderr, /not a Gatehouse database/);
});

test('verify of a garbage file given as an export: exit 2, not an export', async (t) => {
  const file = path.join(scratch, 'garbage.ndjson');
  fs.writeFileSync(file, Buffer.from([0xff, 0xfe, 0x00, 0x12, 0x0a, 0x41]));
  const result = await runCli(['verify', file]);
  t.is(result.code, 2);
  t.regex(result.stderr, /not a Gatehouse export/);
  t.notRegex(result.stderr, noStack);
});

test('verify of an empty file: exit 2', async (t) => {
  const file = path.join(scratch, 'empty.ndjson');
  fs.writeFileSync(file, '');
  t.is((await runCli(['verify', file])).code, 2);
});

test('verify with a malformed --public-key or an unreadable --checkpoint: exit 2', async (t) => {
  const ledger = await openLedger(t);
  await ledger.append(2);
  await ledger.close();
  const db = ['--db', (ledger.store.config.store as { file: string }).file];
  t.is((await runCli(['verify', ...db, '--public-key', 'not-a-key'])).code, 2);
  t.is((await runCli(['verify', ...db, '--data-dir', ledger.store.dataDir, '--checkpoint', path.join(scratch, 'none.json')])).code, 2);
  t.is((await runCli(['verify', ...db, '--data-dir', scratch])).code, 2, 'no signing.key in the data dir and no key given');
});

test('a --keys file or a saved checkpoint with a member named twice is refused (exit 2), not read as its last value', async (t) => {
  const ledger = await closedLedger(t);
  const db = ['--db', (ledger.store.config.store as { file: string }).file];
  const saved = fs.readFileSync(ledger.file('cp.json'), 'utf8');
  const twiceSized = ledger.file('cp-twice.json');
  fs.writeFileSync(twiceSized, saved.replace('"tree_size":', '"tree_size":1,"tree_size":'));
  const checkpoint = await runCli(['verify', ...db, '--data-dir', ledger.store.dataDir, '--checkpoint', twiceSized]);
  t.is(checkpoint.code, 2, checkpoint.stderr);
  t.regex(checkpoint.stderr, /^gatehouse verify: --checkpoint .*cp-twice\.json is not strict JSON: Duplicate member "tree_size"/);
  // Read from its bytes, as prove reads it: a byte that is not UTF-8 is refused, not read as U+FFFD.
  const badUtf8 = ledger.file('cp-bad-utf8.json');
  const at = saved.indexOf('"account_id":"') + '"account_id":"'.length;
  fs.writeFileSync(badUtf8, Buffer.concat([Buffer.from(saved.slice(0, at)), Buffer.from([0xff]), Buffer.from(saved.slice(at + 1))]));
  const notUtf8 = await runCli(['verify', ...db, '--data-dir', ledger.store.dataDir, '--checkpoint', badUtf8]);
  t.is(notUtf8.code, 2, notUtf8.stdout + notUtf8.stderr);
  t.regex(notUtf8.stderr, /^gatehouse verify: --checkpoint .*cp-bad-utf8\.json is not strict JSON: .*not valid UTF-8/);
  t.is(notUtf8.stdout, '');
  const keys = ledger.file('keys-twice.json');
  const listed = JSON.stringify({ keys: ledger.context.publicKeys() });
  fs.writeFileSync(keys, listed.replace('"keys":', '"keys":[],"keys":'));
  const pinned = await runCli(['verify', ...db, '--keys', keys]);
  t.is(pinned.code, 2, pinned.stderr);
  t.regex(pinned.stderr, /cannot read --keys .*Duplicate member "keys"/);
  t.notRegex(pinned.stderr + checkpoint.stderr + notUtf8.stderr, noStack);
});

test('a saved note with an extra final newline (jq -r, echo) verifies; a note whose signature block is garbled is an input error (exit 2), not TAMPERED', async (t) => {
  const ledger = await closedLedger(t);
  const db = ['--db', (ledger.store.config.store as { file: string }).file, '--data-dir', ledger.store.dataDir];
  const note = (JSON.parse(fs.readFileSync(ledger.file('cp.json'), 'utf8')) as { note: string }).note;
  const extraNewline = ledger.file('cp-jq.note');
  fs.writeFileSync(extraNewline, `${note}\n`);
  const ok = await verifyJson([...db, '--checkpoint', extraNewline]);
  t.is(ok.code, 0, ok.stdout + ok.stderr);
  const garbled = ledger.file('cp-garbled.note');
  fs.writeFileSync(garbled, note.replace(/\n\u2014 /, '\nsigned by '));
  const bad = await runCli(['verify', ...db, '--checkpoint', garbled]);
  t.is(bad.code, 2, bad.stdout + bad.stderr);
  t.regex(bad.stderr, /--checkpoint .*cp-garbled\.note is not a signed checkpoint note: signature line does not start with/);
  t.is(bad.stdout, '');
  // Well formed but not signed by the trusted key: that is the verdict's business (exit 1).
  const forged = ledger.file('cp-forged.note');
  const [body, sigs] = note.split('\n\n') as [string, string];
  fs.writeFileSync(forged, `${body}\n\n${sigs.replace(/ (\S+)\n$/, (_, b64: string) => ` ${Buffer.from(Buffer.from(b64, 'base64').map((x, i) => (i === 10 ? x ^ 1 : x))).toString('base64')}\n`)}`);
  t.is((await runCli(['verify', ...db, '--checkpoint', forged])).code, 1);
});

test('a checkpoint signed by another key than the pinned one: exit 1', async (t) => {
  const ledger = await closedLedger(t);
  const other = Buffer.alloc(32, 9).toString('base64'); // a valid-looking key that did not sign
  const result = await verifyJson(['--db', (ledger.store.config.store as { file: string }).file, '--public-key', other]);
  t.is(result.code, 1);
  t.regex(result.report!.accounts[0]!.reason!, /not signed by a trusted key/);
});

test('verify --db without key options trusts the keys beside the database file, and warns that they are not pinned', async (t) => {
  const ledger = await closedLedger(t);
  // The database sits in its data dir (with signing.key); the command runs from elsewhere, with no --data-dir.
  const result = await runCli(['verify', '--db', (ledger.store.config.store as { file: string }).file, '--json'], { cwd: os.tmpdir() });
  t.is(result.code, 0, result.stderr);
  t.true(JSON.parse(result.stdout).ok);
  t.regex(result.stderr, new RegExp(`trusting the signing key in ${ledger.store.dataDir}; it is not pinned`));
});

test('the pinned note verifier key from GET /v1/keys verifies without a warning', async (t) => {
  const ledger = await closedLedger(t);
  const verifier = (ledger.context.publicKeys()[0] as { note_verifier: string }).note_verifier;
  const result = await verifyJson(['--db', (ledger.store.config.store as { file: string }).file, '--public-key', verifier]);
  t.is(result.code, 0, result.stderr);
  t.is(result.stderr, '');
});

for (const kind of kinds.filter((k) => k === 'postgres')) {
  test(`[${kind}] verify --database-url: an intact chain exits 0, the same chain with one header edited exits 1 at that seq`, async (t) => {
    const ledger = await openLedger(t, kind);
    await ledger.append(6);
    await ledger.saveCheckpoint('cp.json');
    const url = (ledger.store.config.store as { url: string }).url;
    const intact = await verifyJson(['--database-url', url, '--data-dir', ledger.store.dataDir, '--master-key', ledger.file('master.key')]);
    t.is(intact.code, 0, intact.stderr);
    t.deepEqual(intact.report!.accounts.map((a) => [a.account_id, a.events, a.checkpoints]), [[ACCOUNT, 6, 1]]);
    // An attacker with database access disables the trigger and edits.
    const { sql } = await import('kysely');
    await sql`ALTER TABLE events DISABLE TRIGGER events_append_only`.execute(ledger.context.store.db);
    await sql`UPDATE events SET state = 'succeeded' WHERE account_id = ${ACCOUNT} AND seq = 4`.execute(ledger.context.store.db);
    await sql`DELETE FROM events WHERE account_id = ${ACCOUNT} AND seq = 6`.execute(ledger.context.store.db);
    const tampered = await verifyJson(['--database-url', url, '--data-dir', ledger.store.dataDir]);
    t.is(tampered.code, 1);
    t.is(tampered.report!.accounts[0]!.first_bad_seq, 4);
  });

  test(`[${kind}] verify --database-url of an unreachable server: exit 2`, async (t) => {
    const result = await runCli(['verify', '--database-url', 'postgres://nobody@127.0.0.1:1/none', '--data-dir', scratch]);
    t.is(result.code, 2);
    t.regex(result.stderr, /cannot connect/);
  });
}

test('verify --account checks one account only', async (t) => {
  const ledger = await openLedger(t);
  await ledger.append(3);
  await ledger.append(2, 'beta');
  await ledger.close();
  const file = (ledger.store.config.store as { file: string }).file;
  tamperSqlite(file, (db) => db.prepare("UPDATE events SET type = 'sent' WHERE account_id = 'beta' AND seq = 1").run());
  const all = await verifyJson(['--db', file, '--data-dir', ledger.store.dataDir]);
  t.is(all.code, 1);
  t.deepEqual(all.report!.accounts.map((a) => [a.account_id, a.first_bad_seq]), [[ACCOUNT, null], ['beta', 1]]);
  const one = await verifyJson(['--db', file, '--data-dir', ledger.store.dataDir, '--account', ACCOUNT]);
  t.is(one.code, 0);
  t.deepEqual(one.report!.accounts.map((a) => a.account_id), [ACCOUNT]);
  t.is((await runCli(['verify', '--db', file, '--data-dir', ledger.store.dataDir, '--account', 'nobody'])).code, 2);
});

test('verify EXPORT --account of an account the export does not hold: exit 2, as for a database, never "intact"', async (t) => {
  const ledger = await openLedger(t);
  await ledger.append(3);
  await ledger.append(2, 'beta');
  await ledger.close();
  const all = ledger.file('all.ndjson');
  t.is((await runCli(['export', ...ledger.store.cliArgs, '--out', all])).code, 0);
  const missing = await runCli(['verify', all, '--data-dir', ledger.store.dataDir, '--account', 'nobody']);
  t.is(missing.code, 2, missing.stdout + missing.stderr);
  t.regex(missing.stderr, /^gatehouse verify: account nobody is not in this export$/m);
  t.is(missing.stdout, '');
  const one = await verifyJson([all, '--data-dir', ledger.store.dataDir, '--account', 'beta']);
  t.is(one.code, 0, one.stderr);
  t.deepEqual(one.report!.accounts.map((a) => [a.account_id, a.events]), [['beta', 2]]);
});

test('a given checkpoint whose account_id contradicts its note is refused like a root_hash that does: exit 1 at its size', async (t) => {
  const ledger = await closedLedger(t);
  const saved = JSON.parse(fs.readFileSync(ledger.file('cp.json'), 'utf8'));
  t.is(saved.account_id, ACCOUNT);
  const edited = ledger.file('cp-other-account.json');
  fs.writeFileSync(edited, JSON.stringify({ ...saved, account_id: 'beta' }));
  const db = (ledger.store.config.store as { file: string }).file;
  const result = await verifyJson(['--db', db, '--data-dir', ledger.store.dataDir, '--checkpoint', edited]);
  t.is(result.code, 1, result.stdout + result.stderr);
  t.deepEqual(result.report!.accounts.map((a) => [a.account_id, a.first_bad_seq]), [[ACCOUNT, 3]]);
  t.regex(result.report!.accounts[0]!.reason!, /^given checkpoint at size 3: account_id "beta" differs from its signed note \(origin "gatehouse\/[0-9a-f]+\/acme"\)$/);
  const intact = await verifyJson(['--db', db, '--data-dir', ledger.store.dataDir, '--checkpoint', ledger.file('cp.json')]);
  t.is(intact.code, 0, 'the checkpoint as saved still verifies');
});
