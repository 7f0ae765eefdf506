import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteLedgerReader } from '../../src/verify/sqlite-reader.js';
import { readVerifyTuning } from '../../src/config/verify-tuning.js';

/**
 * SqliteLedgerReader.accounts() finds the accounts of events with a loose scan of the primary
 * key instead of GROUP BY over every row: on a file an attacker wrote (no NOT NULL, no column
 * affinity, so NULL, numbers, blobs and texts side by side) it must list exactly what GROUP BY
 * lists, or some events would never be verified.
 */
test('accounts() lists exactly the accounts GROUP BY finds, whatever the values', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-accounts-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'odd.db');
  const db = new BetterSqlite3(file);
  db.exec(`CREATE TABLE events (account_id, seq, PRIMARY KEY (account_id, seq));
    CREATE TABLE checkpoints (account_id, tree_size); CREATE TABLE chains (account_id); CREATE TABLE accounts (id);
    CREATE TABLE meta (key, value);`);
  const insert = db.prepare('INSERT INTO events VALUES (?, ?)');
  const values: unknown[] = ['acme', 'b', '', 'A', 'acme ', 'é', Buffer.from('a'), Buffer.from(''), 5, 5.0, 5.5, -1, null, 'a\u0000b', 'a'];
  let seq = 0;
  for (const v of values) for (let i = 0; i < 3; i++) insert.run(v, ++seq);
  db.exec("INSERT INTO checkpoints VALUES ('only-checkpoint', 1); INSERT INTO chains VALUES ('b'); INSERT INTO accounts VALUES ('keys-only');");
  const groupBy = db.prepare(
    'SELECT account_id FROM events GROUP BY account_id UNION SELECT account_id FROM checkpoints ' +
      'UNION SELECT account_id FROM chains UNION SELECT id FROM accounts ORDER BY 1',
  ).raw(true).all().map((r) => (r as unknown[])[0]);
  db.close();

  const reader = SqliteLedgerReader.open(file, readVerifyTuning({}));
  t.teardown(() => reader.close());
  const found = reader.accounts();
  t.deepEqual(found as unknown[], groupBy);
  // 5 and 5.0 are one group ('a' and X'61' are two); 'only-checkpoint' and 'keys-only' come from the other tables.
  t.is(groupBy.length, values.length - 1 + 2);
});
