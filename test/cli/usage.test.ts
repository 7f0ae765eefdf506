import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/server-process.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';

const cases: Array<[string, string[], RegExp]> = [
  ['a port that is not a number', ['serve', '--port', 'abc'], /--port must be a whole number/],
  ['a port out of range', ['serve', '--port', '99999'], /--port must be a whole number/],
  ['an unreadable --max-body', ['serve', '--max-body', 'lots'], /--max-body: cannot read the size "lots"/],
  ['an unknown verb', ['frobnicate'], /Unknown argument|name a command/],
  ['shred without --yes', ['accounts', 'shred', 'acme'], /add --yes to confirm/],
  ...(['principals list', 'init', 'serve', 'export --out x.ndjson'] as const).map((verb): [string, string[], RegExp] => [
    `${verb.split(' ')[0]} given both --db and --database-url`,
    [...verb.split(' '), '--db', 'x.db', '--database-url', 'postgres://nobody@127.0.0.1:1/none'],
    /give --db FILE \(SQLite\) or --database-url URL \(PostgreSQL\), not both/,
  ]),
];

for (const [situation, args, message] of cases) {
  test(`the CLI: ${situation} exits 2 with one clear line and no stack trace`, async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-usage-'));
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const result = await runCli([...args, '--data-dir', dataDir]);
    t.is(result.code, 2);
    t.regex(result.stderr, message);
    t.notRegex(result.stderr, /^\s+at /m);
    t.deepEqual(fs.readdirSync(dataDir), [], 'nothing was initialised');
  });
}

test('serve --help gives the per-client in-flight default the service applies: half of --max-in-flight', async (t) => {
  const result = await runCli(['serve', '--help']);
  t.is(result.code, 0, result.stderr);
  // yargs wraps the description at the terminal's width, inside words too.
  const help = result.stdout.replace(/\s+/g, '');
  t.true(help.includes('(default:halfof--max-in-flight)'), result.stdout);
  t.is(DEFAULT_LIMITS.maxInFlightPerClient as number, DEFAULT_LIMITS.maxInFlight / 2, 'src/http/limits.ts says the same');
});
