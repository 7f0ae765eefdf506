import test from 'ava';
import { EVENT_ROW_COLUMNS } from '../../src/core/event-shape.js';
import { runCli } from '../helpers/server-process.js';
import { ACCOUNT, closedLedger, readLines, tamperSqlite, verifyJson, writeLines } from './ledger-fixture.js';

/**
 * The verify warnings (event time going backwards, the unsigned tail) are only for an account
 * that is otherwise intact (docs/cli.md#gatehouse-verify): events 9 and 10 swapped, the one now
 * at 10 with the earliest time, are TAMPERED at 9 and nothing else, neither on stderr nor in
 * --json.
 */

const EARLY = '2000-01-01T00:00:00.000Z';

async function assertVerdictOnly(t: import('ava').ExecutionContext, args: string[]) {
  const json = await verifyJson(args);
  t.is(json.code, 1, json.stdout + json.stderr);
  t.like(json.report!.accounts[0], { account_id: ACCOUNT, first_bad_seq: 9 });
  t.false('warnings' in json.report!, JSON.stringify(json.report));
  t.notRegex(json.stderr, /warning: account/);
  const human = await runCli(['verify', ...args]);
  t.is(human.code, 1);
  t.regex(human.stdout, /^account acme: TAMPERED at seq 9: /);
  t.notRegex(human.stderr, /warning: account/);
}

test('SQLite: two events swapped, time going backwards between them: the verdict, no warning', async (t) => {
  const ledger = await closedLedger(t, 12);
  const file = (ledger.store.config.store as { file: string }).file;
  tamperSqlite(file, (db) => {
    const cols = EVENT_ROW_COLUMNS.filter((c) => c !== 'seq' && c !== 'account_id').join(', ');
    const row = (seq: number) => db.prepare(`SELECT ${cols} FROM events WHERE account_id = ? AND seq = ?`).raw(true).get(ACCOUNT, seq) as unknown[];
    const [a, b] = [row(9), row(10)];
    const set = cols.split(', ').map((c) => `${c} = ?`).join(', ');
    db.prepare(`UPDATE events SET ${set} WHERE account_id = ? AND seq = 9`).run(...b, ACCOUNT);
    db.prepare(`UPDATE events SET ${set} WHERE account_id = ? AND seq = 10`).run(...a, ACCOUNT);
    db.prepare('UPDATE events SET ts = ? WHERE account_id = ? AND seq = 10').run(EARLY, ACCOUNT);
  });
  await assertVerdictOnly(t, ledger.store.cliArgs);
});

test('export: two event lines swapped, time going backwards between them: the verdict, no warning', async (t) => {
  const ledger = await closedLedger(t, 12);
  const file = ledger.file('export.ndjson');
  t.is((await runCli(['export', ...ledger.store.cliArgs, '--out', file])).code, 0);
  const lines = readLines(file);
  [lines[9], lines[10]] = [lines[10]!, lines[9]!]; // seq 9 and 10 (line 0 is the header)
  const moved = JSON.parse(lines[10]!) as { header: { ts: string } };
  moved.header.ts = EARLY;
  lines[10] = JSON.stringify(moved);
  writeLines(file, lines);
  await assertVerdictOnly(t, [file, '--data-dir', ledger.store.dataDir]);
});
