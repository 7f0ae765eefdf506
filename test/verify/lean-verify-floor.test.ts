import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import { ledgerFixture } from '../../bench/ledger-fixture.js';
import { FLIP_FIRST_PAYLOAD_BYTE, rechain, tamperSqlite } from './ledger-fixture.js';

/**
 * The verify floor (bench/lean-verify.mjs) is only a floor if it verifies: BENCHMARKS.md
 * compares the product with it. On the bench's own fixture (3,000 events, a checkpoint every
 * 1,000) cut into chunks of 64 events over two threads, the intact file must pass and every
 * tamper must fail, in the middle of a chunk, at its first or last row and at the log's end.
 */

const exec = promisify(execFile);
const FLOOR = path.resolve(import.meta.dirname, '../../bench/lean-verify.mjs');
const SMALL = { LEAN_VERIFY_THREADS: '2', LEAN_VERIFY_CHUNK_LEVEL: '6' };

let base: Promise<{ dir: string; db: string }> | undefined;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lean-verify-'));
test.after.always(() => fs.rmSync(tmp, { recursive: true, force: true }));

function baseFixture() {
  base ??= ledgerFixture(3000, tmp).then((f) => ({ dir: f.dataDir, db: f.dbFile }));
  return base;
}

async function floor(dbFile: string, dataDir: string): Promise<{ code: number; out: { ok: boolean; failure: { seq: number; reason: string } | null } }> {
  try {
    const { stdout } = await exec(process.execPath, [FLOOR, dbFile, dataDir], { env: { ...process.env, ...SMALL } });
    return { code: 0, out: JSON.parse(stdout) };
  } catch (error) {
    const e = error as { code: number; stdout: string };
    return { code: e.code, out: JSON.parse(e.stdout) };
  }
}

/** A copy of the fixture's file with `edit` applied (its append-only triggers dropped). */
async function tampered(name: string, edit: (db: BetterSqlite3.Database) => void): Promise<{ db: string; dir: string }> {
  const { db, dir } = await baseFixture();
  const copy = path.join(tmp, `${name}.db`);
  fs.copyFileSync(db, copy);
  tamperSqlite(copy, edit);
  return { db: copy, dir };
}

test('the floor passes the intact fixture', async (t) => {
  const { db, dir } = await baseFixture();
  const { code, out } = await floor(db, dir);
  t.is(code, 0);
  t.true(out.ok);
});

const cases: Array<[string, number, (db: BetterSqlite3.Database) => void]> = [
  ['a header value in a chunk', 100, (db) => db.prepare("UPDATE events SET actor = 'someone else' WHERE seq = 100").run()],
  ['a payload byte', 101, (db) => db.prepare(FLIP_FIRST_PAYLOAD_BYTE).run(101)],
  ['payload_hash of an event without a payload', 102, (db) => db.prepare("UPDATE events SET payload_hash = (SELECT payload_hash FROM events WHERE seq = 101) WHERE seq = 102").run()],
  ['the last event of a chunk deleted', 128, (db) => db.prepare('DELETE FROM events WHERE seq = 128').run()],
  ['the first event of a chunk', 129, (db) => db.prepare("UPDATE events SET state = 'forged' WHERE seq = 129").run()],
  ['the first event of a chunk, rechained after it (only the checkpoints catch it)', 1000, (db) => {
    db.prepare("UPDATE events SET state = 'forged' WHERE seq = 129").run();
    rechain(db, 129);
  }],
  ['the last event deleted', 3000, (db) => db.prepare('DELETE FROM events WHERE seq = 3000').run()],
  ['two events swapped', 700, (db) => {
    db.prepare('UPDATE events SET seq = -1 WHERE seq = 700').run();
    db.prepare('UPDATE events SET seq = 700 WHERE seq = 701').run();
    db.prepare('UPDATE events SET seq = 701 WHERE seq = -1').run();
  }],
  ['an edit rechained to the end (only the checkpoints catch it)', 1000, (db) => {
    db.prepare("UPDATE events SET route = '/v1/other' WHERE seq = 640").run();
    rechain(db, 640);
  }],
  ['a checkpoint root that is not the signed one', 2000, (db) => {
    db.prepare("UPDATE checkpoints SET root_hash = (SELECT root_hash FROM checkpoints WHERE tree_size = 1000) WHERE tree_size = 2000").run();
  }],
  ['an event of another account', 50, (db) => db.prepare("UPDATE events SET account_id = 'ACME' WHERE seq = 50").run()],
  ['a non-ASCII header value (a floor declines, never accepts, what it cannot hash exactly)', 7, (db) => {
    db.prepare("UPDATE events SET actor = 'prn_gätewäy' WHERE seq = 7").run();
    rechain(db, 7);
  }],
];

for (const [name, seq, edit] of cases) {
  test(`the floor fails on ${name}`, async (t) => {
    const file = await tampered(name.replace(/\W+/g, '-'), edit);
    const { code, out } = await floor(file.db, file.dir);
    t.is(code, 1);
    t.false(out.ok);
    // It stops at the first failure it meets: roughly where, not the reference report.
    t.true(out.failure!.seq <= seq, `failure at ${out.failure!.seq}: ${out.failure!.reason}`);
  });
}
