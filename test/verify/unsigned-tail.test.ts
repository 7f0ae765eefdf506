import test from 'ava';
import { runCli } from '../helpers/server-process.js';
import { ACCOUNT, closedLedger, openLedger, readLines, verifyJson, writeLines } from './ledger-fixture.js';

/** A closed SQLite ledger: `signed` events, a checkpoint over them (when signed > 0), then `after` more. */
async function ledgerWithTail(t: import('ava').ExecutionContext, signed: number, after: number) {
  const ledger = await openLedger(t);
  await ledger.append(signed);
  if (signed > 0) await ledger.saveCheckpoint('cp.json');
  await ledger.append(after);
  await ledger.close();
  return { ledger, args: ['--db', (ledger.store.config.store as { file: string }).file, '--data-dir', ledger.store.dataDir] };
}

test('events after the newest signed checkpoint: still intact and exit 0, with a warning on stderr and in --json', async (t) => {
  const { args } = await ledgerWithTail(t, 3, 4);
  const human = await runCli(['verify', ...args]);
  t.is(human.code, 0, human.stderr);
  t.is(human.stdout, `account ${ACCOUNT}: intact (7 events, 1 checkpoints)\n`);
  t.regex(human.stderr, new RegExp(`^gatehouse verify: warning: account ${ACCOUNT}: events 4–7 are after the newest signed checkpoint \\(3\\): nothing signed covers them yet; a checkpoint saved later \\(--checkpoint\\) shows whether they were rewritten$`, 'm'));
  const json = await verifyJson(args);
  t.is(json.code, 0);
  t.true(json.report!.ok);
  t.deepEqual((json.report as unknown as { warnings: string[] }).warnings, [
    `account ${ACCOUNT}: events 4–7 are after the newest signed checkpoint (3): nothing signed covers them yet; a checkpoint saved later (--checkpoint) shows whether they were rewritten`,
  ]);
});

test('an account with events and no checkpoint at all is warned about; one whose checkpoint covers every event is not', async (t) => {
  const none = await ledgerWithTail(t, 0, 2);
  const unsigned = await runCli(['verify', ...none.args]);
  t.is(unsigned.code, 0, unsigned.stderr);
  t.regex(unsigned.stderr, /warning: account acme: events 1–2 are covered by no signed checkpoint \(the account has none\): nothing signed covers them yet/);

  const covered = await ledgerWithTail(t, 3, 0);
  const clean = await verifyJson(covered.args);
  t.is(clean.code, 0);
  t.false('warnings' in clean.report!, 'a clean report keeps the documented shape');
  t.notRegex(clean.stderr, /nothing signed covers/);
});

test('a tampered account gets its verdict, not the unsigned-tail warning', async (t) => {
  const { ledger, args } = await ledgerWithTail(t, 2, 2);
  const { tamperSqlite } = await import('./ledger-fixture.js');
  tamperSqlite((ledger.store.config.store as { file: string }).file, (db) => db.prepare("UPDATE events SET type = 'sent' WHERE seq = 4").run());
  const result = await runCli(['verify', ...args]);
  t.is(result.code, 1);
  t.notRegex(result.stderr, /nothing signed covers/);
});

test('an export cut after its header (or before an account\'s events) is warned about: the input holds the account\'s data key and none of its events', async (t) => {
  const ledger = await closedLedger(t, 3);
  const file = ledger.file('export.ndjson');
  t.is((await runCli(['export', ...ledger.store.cliArgs, '--account', ACCOUNT, '--out', file])).code, 0);
  const cut = ledger.file('cut.ndjson');
  writeLines(cut, readLines(file).slice(0, 1));
  const report = await verifyJson([cut, '--data-dir', ledger.store.dataDir]);
  t.is(report.code, 0, 'intact as far as it goes: nothing in it is wrong');
  t.deepEqual((report.report as unknown as { warnings: string[] }).warnings, [
    `account ${ACCOUNT}: the input holds its data key but none of its events; the service makes the key with the account's first event, so the input may have been cut short`,
  ]);
  // The whole export says nothing of the kind.
  const whole = await verifyJson([file, '--data-dir', ledger.store.dataDir]);
  t.is(whole.code, 0);
  t.false((whole.report as unknown as { warnings?: string[] }).warnings?.some((w) => w.includes('data key')) ?? false);
});
