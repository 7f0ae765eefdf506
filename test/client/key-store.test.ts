import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteKeyStore } from '../../src/client/index.js';

function tmpFile() {
  const dir = mkdtempSync(join(tmpdir(), 'gh-keystore-'));
  return { path: join(dir, 'keys.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('one intent keeps one key across store instances (a restarted process)', async (t) => {
  const f = tmpFile();
  t.teardown(f.cleanup);
  const a = new SqliteKeyStore(f.path);
  const k1 = await a.keyFor('task-812:create-ticket');
  t.is(await a.keyFor('task-812:create-ticket'), k1);
  a.close();
  const b = new SqliteKeyStore(f.path);
  t.is(await b.keyFor('task-812:create-ticket'), k1);
  t.is(await b.get('task-812:create-ticket'), k1);
  b.close();
});

test('a new intent gets a new key; keys are visible ASCII and uuid-based', async (t) => {
  const f = tmpFile();
  t.teardown(f.cleanup);
  const s = new SqliteKeyStore(f.path);
  t.teardown(() => s.close());
  const k1 = await s.keyFor('task-812:create-ticket');
  const k2 = await s.keyFor('task-812:create-ticket#2');
  t.not(k1, k2);
  t.regex(k1, /^ik_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.is(await s.get('never-seen'), undefined);
});

test('the store runs with synchronous=FULL and the row is committed before keyFor resolves', async (t) => {
  const f = tmpFile();
  t.teardown(f.cleanup);
  const s = new SqliteKeyStore(f.path);
  t.teardown(() => s.close());
  const key = await s.keyFor('intent-a');
  // A second connection (another process) sees the committed row.
  const other = new Database(f.path, { readonly: true });
  t.teardown(() => other.close());
  const row = other.prepare('SELECT idempotency_key FROM intent_keys WHERE intent = ?').get('intent-a') as { idempotency_key: string };
  t.is(row.idempotency_key, key);
});

test('two stores on one file racing on a new intent agree on one key', async (t) => {
  const f = tmpFile();
  t.teardown(f.cleanup);
  const stores = Array.from({ length: 4 }, () => new SqliteKeyStore(f.path));
  t.teardown(() => stores.forEach((s) => s.close()));
  const keys = await Promise.all(stores.map((s) => s.keyFor('race')));
  t.is(new Set(keys).size, 1);
});

test('an empty intent is refused', async (t) => {
  const f = tmpFile();
  t.teardown(f.cleanup);
  const s = new SqliteKeyStore(f.path);
  t.teardown(() => s.close());
  await t.throwsAsync(() => s.keyFor(''), { instanceOf: TypeError });
});
