import test from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';

const kinds = await storeKinds();

/**
 * Health is honest: it answers 503 when the store cannot take a write. What is simulated here:
 * another process holding SQLite's write lock (the probe gives up after the busy timeout), and
 * the store's connection gone. Not simulated: a full disk or a file turned read-only under an
 * open connection (chmod does not affect an open descriptor).
 */

test('[sqlite] /v1/healthz answers 503 while another process holds the write lock, and 200 again once it lets go', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  t.is((await app.request('GET', '/v1/healthz')).status, 200);
  const other = new BetterSqlite3((app.store.config.store as { file: string }).file);
  t.teardown(() => other.close());
  other.exec('BEGIN EXCLUSIVE');
  const blocked = await app.request('GET', '/v1/healthz');
  t.is(blocked.status, 503);
  t.is(blocked.body.status, 'unavailable');
  other.exec('ROLLBACK');
  t.is((await app.request('GET', '/v1/healthz')).status, 200);
});

for (const kind of kinds) {
  test(`[${kind}] /v1/healthz answers 503 once the store's connection is gone`, async (t) => {
    const app = await startTestApp(null, kind);
    try {
      t.is((await app.request('GET', '/v1/healthz')).status, 200);
      await app.context.store.close(); // the connection (SQLite handle, PostgreSQL pool) is gone
      const res = await app.request('GET', '/v1/healthz');
      t.is(res.status, 503);
      t.is(res.body.error.code, 'store_unavailable');
      t.is(res.headers.get('retry-after'), '1');
    } finally {
      await app.server.close();
      await app.store.drop();
    }
  });
}
