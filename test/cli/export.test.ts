import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import test from 'ava';
import { BIN, runCli } from '../helpers/server-process.js';
import { ACCOUNT, closedLedger, openLedger } from '../verify/ledger-fixture.js';

test('export --out - (a separate word) writes the NDJSON to stdout, and verify reads it', async (t) => {
  const ledger = await closedLedger(t);
  const result = await runCli(['export', ...ledger.store.cliArgs, '--account', ACCOUNT, '--out', '-']);
  t.is(result.code, 0, result.stderr);
  const lines = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
  t.like(lines[0], { format: 'gatehouse-export', account_id: ACCOUNT });
  t.is(lines.filter((l) => l.kind === 'event').length, 3);
  t.false(fs.existsSync('-'), 'no file named "-" was made');
  const file = ledger.file('from-stdout.ndjson');
  fs.writeFileSync(file, result.stdout);
  const verified = await runCli(['verify', file, '--data-dir', ledger.store.dataDir]);
  t.is(verified.code, 0, verified.stdout + verified.stderr);
});

test('export --out with no value is a usage error (exit 2), not an export to a file named ""', async (t) => {
  const ledger = await closedLedger(t);
  const result = await runCli(['export', ...ledger.store.cliArgs, '--out']);
  t.is(result.code, 2);
  t.regex(result.stderr, /out/);
});

test('export --account of an account not in the ledger exits 2 and writes nothing', async (t) => {
  const ledger = await closedLedger(t);
  const out = ledger.file('nosuch.ndjson');
  const result = await runCli(['export', ...ledger.store.cliArgs, '--account', 'nosuch', '--out', out]);
  t.is(result.code, 2);
  t.is(result.stderr, 'gatehouse: account nosuch is not in this ledger\n');
  t.false(fs.existsSync(out), 'no export file was made');
  const toStdout = await runCli(['export', ...ledger.store.cliArgs, '--account', 'nosuch', '--out', '-']);
  t.is(toStdout.code, 2);
  t.is(toStdout.stdout, '');
});

test('an export (as GET /v1/audit/export writes it) of an account with no data key does not call it shredded', async (t) => {
  const ledger = await openLedger(t);
  await ledger.append(1);
  const { exportLines } = await import('../../src/ledger/export.js');
  const header = { ledger_id: ledger.context.ledgerId, exported_at: new Date().toISOString(), keys: ledger.context.publicKeys() };
  const first = async (accountId: string) => {
    for await (const line of exportLines(ledger.context.store.db, { ...header, account_id: accountId })) return JSON.parse(line);
    throw new Error('no header line');
  };
  t.deepEqual((await first('nosuch')).data_keys, {}, 'absent, not null (null means shredded)');
  t.is(typeof (await first(ACCOUNT)).data_keys[ACCOUNT], 'string');
});

test('export and prove refuse an --out file that exists (exit 2) and leave it as it was', async (t) => {
  const ledger = await closedLedger(t);
  const out = ledger.file('kept.txt');
  fs.writeFileSync(out, 'an earlier export, the only copy\n');
  const verbs: Array<[string, string[]]> = [
    ['export', ['export', ...ledger.store.cliArgs, '--account', ACCOUNT, '--out', out]],
    ['prove', ['prove', ...ledger.store.cliArgs, '--account', ACCOUNT, '--seq', '1', '--out', out]],
  ];
  for (const [verb, args] of verbs) {
    const result = await runCli(args);
    t.is(result.code, 2, `${verb}: ${result.stdout}${result.stderr}`);
    t.is(result.stderr, `gatehouse: --out ${out} exists already; it is never overwritten (remove it or name another file)\n`, verb);
    t.is(result.stdout, '', verb);
    t.is(fs.readFileSync(out, 'utf8'), 'an earlier export, the only copy\n', `${verb}: the file is untouched`);
  }
});

test('export --out - whose reader goes away (| head) stops quietly with the SIGPIPE status, not an I/O error', async (t) => {
  // Enough events that the export outgrows a pipe's buffer: the writes after the reader left fail with EPIPE.
  const ledger = await closedLedger(t, 600);
  const child = spawn(process.execPath, [BIN, 'export', ...ledger.store.cliArgs, '--out', '-'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // As `head -c 1` does: read the first bytes, then close the read end.
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();
  const [code] = await once(child, 'exit') as [number | null];
  t.is(stderr, '');
  t.is(code, 141);
});
