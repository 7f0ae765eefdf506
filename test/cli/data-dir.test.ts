import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { runCli } from '../helpers/server-process.js';
import { createTestStore } from '../helpers/stores.js';

test('--db alone, run from another directory, finds the keys beside the database', async (t) => {
  const store = await createTestStore('sqlite');
  t.teardown(() => store.drop());
  const file = (store.config.store as { file: string }).file;
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cwd-'));
  t.teardown(() => fs.rmSync(cwd, { recursive: true, force: true }));
  const elsewhere = { cwd };

  const added = await runCli(['principals', 'add', '--db', file, '--account', 'acme', '--role', 'gateway'], elsewhere);
  t.is(added.code, 0, added.stderr);
  t.regex(added.stdout, /^key: gh_[A-Za-z0-9_-]{43}$/m);

  const out = path.join(store.dataDir, 'export.ndjson');
  const exported = await runCli(['export', '--db', file, '--out', out], elsewhere);
  t.is(exported.code, 0, exported.stderr);
  t.is(JSON.parse(fs.readFileSync(out, 'utf8').split('\n')[0]!).format, 'gatehouse-export');
  t.deepEqual(fs.readdirSync(cwd), [], 'nothing was created where the command ran');
});
