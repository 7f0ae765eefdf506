import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/server-process.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';
import { storeKinds } from '../helpers/stores.js';

// Asked before any test is declared: ava takes declarations only in the file's first synchronous run.
const postgresUp = (await storeKinds()).includes('postgres');
const ADMIN_URL = process.env.GATEHOUSE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const cases: Array<[string, string[], RegExp]> = [
  // Text that is no number is not echoed as "NaN", which would tell the user nothing.
  ['a port that is not a number', ['serve', '--port', 'abc'], /^gatehouse: --port must be a whole number from 0 to 65535\n/],
  ['a metrics port that is not a number', ['serve', '--metrics-port', 'abc'], /^gatehouse: --metrics-port must be a whole number from 0 to 65535\n/],
  ['a port out of range', ['serve', '--port', '99999'], /--port must be a whole number from 0 to 65535, not 99999/],
  ['an unreadable --max-body', ['serve', '--max-body', 'lots'], /--max-body: cannot read the size "lots"/],
  ['an unknown verb', ['frobnicate'], /Unknown argument|name a command/],
  ['shred without --yes', ['accounts', 'shred', 'acme'], /add --yes to confirm/],
  // An empty shell variable after an option must not drop the check it names (verify would answer intact).
  ['verify --checkpoint with no value', ['verify', 'x.ndjson', '--checkpoint'], /--checkpoint needs a value/],
  ['verify --witness-key followed by another option', ['verify', 'x.ndjson', '--witness-key', '--json'], /--witness-key needs a value/],
  ['verify --min-witnesses with no value', ['verify', 'x.ndjson', '--min-witnesses'], /--min-witnesses needs a value/],
  ['serve --port with no value', ['serve', '--port'], /--port needs a value/],
  ['serve --public-url that is not a URL', ['serve', '--public-url', 'gh.example.com'], /^gatehouse: --public-url must be an http\(s\) URL, not "gh\.example\.com"\n/],
  ['serve --public-url with a password', ['serve', '--public-url', 'https://user:pw-1@gh.example.com'], /^gatehouse: --public-url takes no user name or password/],
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

test('the CLI: verify-evidence --witness-key with no value exits 2 rather than skipping the witness check', async (t) => {
  const result = await runCli(['verify-evidence', 'e.json', '--witness-key']);
  t.is(result.code, 2);
  t.regex(result.stderr, /--witness-key needs a value/);
});

test('the CLI: proxy --timeout 0s or --lease 0s exits 2 saying it must be more than 0, in words', async (t) => {
  for (const flag of ['--timeout', '--lease']) {
    const result = await runCli(['proxy', '--upstream', 'http://127.0.0.1:1', '--gatehouse', 'http://127.0.0.1:1', flag, '0s'], {
      env: { GATEHOUSE_API_KEY: 'gh_unused' },
    });
    t.is(result.code, 2, result.stderr);
    t.regex(result.stderr, new RegExp(`${flag}: must be more than 0`));
    t.notRegex(result.stderr, /5e-324|any length/);
  }
});

test('the CLI: a proxy URL flag that is not a plain http(s) URL exits 2 naming the flag, --public-url included', async (t) => {
  const proxy = ['proxy', '--upstream', 'http://127.0.0.1:1', '--gatehouse', 'http://127.0.0.1:2'];
  const env = { GATEHOUSE_API_KEY: 'gh_unused' };
  for (const [args, message] of [
    [[...proxy, '--public-url', 'gatehouse.example.com'], /^gatehouse: --public-url must be an http\(s\) URL, not "gatehouse\.example\.com"\n/],
    [[...proxy, '--public-url', 'https://gatehouse.example.com/?x=1'], /^gatehouse: --public-url takes no query or fragment\n/],
    [[...proxy, '--public-url', 'https://user:pw-1@gatehouse.example.com'], /^gatehouse: --public-url takes no user name or password/],
    [['proxy', '--upstream', 'http://user:pw-1@127.0.0.1:1', '--gatehouse', 'http://127.0.0.1:2'], /^gatehouse: --upstream takes no user name or password/],
  ] as Array<[string[], RegExp]>) {
    const result = await runCli(args, { env });
    t.is(result.code, 2, result.stderr);
    t.regex(result.stderr, message);
  }
});

test('the CLI: proxy --keys with a member named twice exits 2 rather than pinning whichever list a parser keeps', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-usage-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const keys = path.join(dir, 'keys.json');
  fs.writeFileSync(keys, '{"keys":[],"keys":[]}');
  const result = await runCli(['proxy', '--upstream', 'http://127.0.0.1:1', '--gatehouse', 'http://127.0.0.1:2', '--api-key', 'x', '--keys', keys]);
  t.is(result.code, 2);
  t.regex(result.stderr, /--keys: Duplicate member "keys"/);
});

test('--help wraps its descriptions between words, never inside one', async (t) => {
  const result = await runCli(['serve', '--help']);
  t.is(result.code, 0, result.stderr);
  const help = result.stdout.replace(/\s+/g, ' ');
  for (const phrase of ['(SQLite) gatehouse.db', 'DATA_DIR/gatehouse.db', '(1mb = 1 MiB)', 'X-Forwarded-For and set X-Forwarded-Proto']) {
    t.true(help.includes(phrase), `"${phrase}" is cut in: ${result.stdout}`);
  }
});

test('serve --help gives the per-client in-flight default the service applies: half of --max-in-flight', async (t) => {
  const result = await runCli(['serve', '--help']);
  t.is(result.code, 0, result.stderr);
  // Lines wrap at the terminal's width: compare without the whitespace.
  const help = result.stdout.replace(/\s+/g, '');
  t.true(help.includes('(default:halfof--max-in-flight)'), result.stdout);
  t.is(DEFAULT_LIMITS.maxInFlightPerClient as number, DEFAULT_LIMITS.maxInFlight / 2, 'src/http/limits.ts says the same');
});


for (const [where, url] of [
  ['a PostgreSQL server that does not answer', 'postgres://postgres@127.0.0.1:1/none'],
  ...(postgresUp ? [['a PostgreSQL database that does not exist', `${ADMIN_URL.replace(/\/[^/]*$/, '')}/gatehouse_no_such_database`]] : []),
] as Array<[string, string]>) {
  test(`the CLI: ${where} exits 2 with one line naming the database problem, for serve and for a verb that reads the ledger`, async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-usage-'));
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    for (const args of [['serve', '--port', '0'], ['principals', 'list']]) {
      const result = await runCli([...args, '--data-dir', dataDir, '--database-url', url]);
      t.is(result.code, 2, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
      t.regex(result.stderr, /^gatehouse: (cannot reach the database: )?(connect ECONNREFUSED|database "gatehouse_no_such_database" does not exist)/);
      t.notRegex(result.stderr, /^\s+at /m);
      t.notRegex(result.stderr, /idempotency key/, 'an API client\'s advice is no use at the command line');
    }
  });
}

test('the CLI: a --database-url (or GATEHOUSE_DATABASE_URL) that is no PostgreSQL URL exits 2 saying so, for every verb, never repeating the URL', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-usage-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // node-postgres would read `notaurl` as the host "base" and try a mysql:// URL as PostgreSQL.
  const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [['serve', '--port', '0', '--data-dir', dataDir, '--database-url', 'notaurl'], {}, /^gatehouse: --database-url is not a URL: give postgres:\/\/user@host:port\/database\n$/],
    [['principals', 'list', '--data-dir', dataDir, '--database-url', 'mysql://root:secret@127.0.0.1/db'], {}, /^gatehouse: --database-url names mysql, not PostgreSQL: give postgres:\/\/user@host:port\/database\n$/],
    [['verify', '--database-url', 'mysql://root:secret@127.0.0.1/db'], {}, /^gatehouse verify: --database-url names mysql, not PostgreSQL/],
    [['principals', 'list', '--data-dir', dataDir], { GATEHOUSE_DATABASE_URL: 'notaurl' }, /^gatehouse: GATEHOUSE_DATABASE_URL is not a URL/],
  ];
  for (const [args, env, message] of cases) {
    const result = await runCli(args, { env });
    t.is(result.code, 2, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
    t.regex(result.stderr, message, args.join(' '));
    t.notRegex(result.stderr, /secret/, 'the URL, which may hold a password, is not repeated');
  }
});
