import fs from 'node:fs';
import test from 'ava';
import pg from 'pg';
import { runCli } from '../helpers/server-process.js';
import { createTestStore, storeKinds } from '../helpers/stores.js';

/**
 * A data dir with key files and no database is what a mistyped --data-dir next to copied keys
 * looks like: the verbs that need an existing ledger refuse it and create nothing.
 */
const readers: Array<[string, string[]]> = [
  ['principals list', ['principals', 'list']],
  ['principals revoke', ['principals', 'revoke', 'prn_x']],
  ['accounts shred', ['accounts', 'shred', 'acme', '--yes']],
  ['export', ['export', '--out', '-']],
  ['prove', ['prove', '--account', 'acme', '--seq', '1', '--out', '/nonexistent/evidence.json']],
];

for (const kind of await storeKinds()) {
  for (const [verb, args] of readers) {
    test(`[${kind}] ${verb} where there is no ledger exits 2, says how to make one, and creates nothing`, async (t) => {
      const store = await createTestStore(kind);
      t.teardown(() => store.drop());
      const result = await runCli([...args, ...store.cliArgs]);
      t.is(result.code, 2, result.stdout + result.stderr);
      t.regex(result.stderr, /^gatehouse: there is no Gatehouse ledger at \S+: check --data-dir, --db or --database-url, or create one with `gatehouse init`/);
      t.is(result.stdout, '');
      t.deepEqual(fs.readdirSync(store.dataDir).sort(), ['master.key', 'signing.key'], 'no database file was made');
      if (kind === 'postgres') {
        const client = new pg.Client({ connectionString: store.cliArgs[store.cliArgs.indexOf('--database-url') + 1] });
        await client.connect();
        const tables = await client.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()");
        await client.end();
        t.is(tables.rows[0].n, 0, 'no migration ran');
      }
    });
  }
}

test('principals add on a data dir with keys and no database still starts the ledger (docs/cli.md), and list then reads it', async (t) => {
  const store = await createTestStore('sqlite');
  t.teardown(() => store.drop());
  const added = await runCli(['principals', 'add', ...store.cliArgs, '--account', 'acme', '--role', 'gateway']);
  t.is(added.code, 0, added.stderr);
  const listed = await runCli(['principals', 'list', ...store.cliArgs]);
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, /\tacme\tgateway\tactive\t/);
});
