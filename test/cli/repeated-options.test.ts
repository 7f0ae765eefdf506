import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { runCli } from '../helpers/server-process.js';
import { ACCOUNT, openLedger } from '../verify/ledger-fixture.js';

// yargs makes an option given twice an array; only the options declared repeatable
// (docs/cli.md) may be. Every other one given twice is a usage error, for every verb, before
// the verb sees an array where it expects one value (a stack trace, exit 1 read as a verdict,
// or an SQLite error, before).
/** A data dir that must stay absent: the verb is refused before it opens anything. */
const store = (dir: string) => ['--data-dir', path.join(dir, 'data')];

const cases: Array<[string, (dir: string) => string[], string]> = [
  ['export --out', (dir) => ['export', ...store(dir), '--account', 'acme', '--out', path.join(dir, 'a.ndjson'), '--out', path.join(dir, 'b.ndjson')], 'out'],
  ['verify-evidence --public-key', (dir) => ['verify-evidence', path.join(dir, 'ev.json'), '--public-key', 'K', '--public-key', 'K'], 'public-key'],
  ['verify --public-key', (dir) => ['verify', '--db', path.join(dir, 'x.db'), '--public-key', 'K', '--public-key', 'K'], 'public-key'],
  ['verify --keys', (dir) => ['verify', '--db', path.join(dir, 'x.db'), '--keys', 'f', '--keys', 'f'], 'keys'],
  ['prove --account', (dir) => ['prove', ...store(dir), '--account', 'acme', '--account', 'beta', '--seq', '1', '--out', path.join(dir, 'ev.json')], 'account'],
  ['prove --seq, three times', (dir) => ['prove', ...store(dir), '--account', 'acme', '--seq', '1', '--seq', '2', '--seq', '3', '--out', path.join(dir, 'ev.json')], 'seq'],
  ['principals add --account (a subcommand)', (dir) => ['principals', 'add', ...store(dir), '--account', 'a', '--account', 'b', '--role', 'admin'], 'account'],
  ['serve --port', (dir) => ['serve', ...store(dir), '--port', '0', '--port', '0'], 'port'],
  ['fingerprint --command', () => ['fingerprint', '--account', 'a', '--method', 'POST', '--route', '/x', '--command', '{}', '--command', '{}'], 'command'],
  ['--data-dir, a store option', (dir) => ['principals', 'list', '--data-dir', dir, '--data-dir', dir], 'data-dir'],
];

for (const [situation, argsIn, option] of cases) {
  test(`the CLI: ${situation} given more than once exits 2 naming the option, no stack trace`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-repeated-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const args = argsIn(dir);
    const times = args.filter((a) => a === `--${option}`).length;
    const result = await runCli(args);
    t.is(result.code, 2, result.stderr);
    t.is(result.stderr, `gatehouse: --${option} was given ${times} times; give it once\nRun gatehouse --help for usage.\n`);
    t.is(result.stdout, '');
    t.deepEqual(fs.readdirSync(dir), [], 'nothing was written or initialised');
  });
}

test('repeatable options (declared as arrays) still take several values: verify --checkpoint, principals add --role', async (t) => {
  const ledger = await openLedger(t);
  await ledger.append(3);
  const first = await ledger.saveCheckpoint('cp3.json');
  await ledger.append(2);
  const second = await ledger.saveCheckpoint('cp5.json');
  await ledger.close();
  const verified = await runCli(['verify', ...ledger.store.cliArgs, '--account', ACCOUNT, '--checkpoint', first.file, '--checkpoint', second.file]);
  t.is(verified.code, 0, verified.stdout + verified.stderr);
  t.regex(verified.stdout, /account acme: intact \(5 events/);
  const added = await runCli(['principals', 'add', ...ledger.store.cliArgs, '--account', ACCOUNT, '--role', 'gateway', '--role', 'auditor', '--json']);
  t.is(added.code, 0, added.stderr);
  t.deepEqual(JSON.parse(added.stdout).principal.roles, ['gateway', 'auditor']);
});
