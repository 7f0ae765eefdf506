import test from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import { startTestApp } from '../helpers/app.js';
import { claim, ticketClaim } from '../operations/claims.js';

test('[sqlite] another connection holding the write lock: claims answer 503 store_unavailable after the busy wait, healthz 503 at once, reads still served', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const gw = await app.keyFor('acme', 'gateway');
  const before = await claim(app, gw, 'before', ticketClaim('before'));
  t.is(before.status, 201);
  const file = (app.store.config.store as { file: string }).file;
  const other = new BetterSqlite3(file);
  t.teardown(() => other.close());
  other.exec('BEGIN IMMEDIATE');
  const started = Date.now();
  const [held, health, read] = await Promise.all([
    claim(app, gw, 'held', ticketClaim('held')).then((r) => ({ ...r, ms: Date.now() - started })),
    app.request('GET', '/v1/healthz').then((r) => ({ ...r, ms: Date.now() - started })),
    app.request('GET', `/v1/operations/${before.body.operation.id}`, { key: gw }).then((r) => ({ ...r, ms: Date.now() - started })),
  ]);
  t.is(health.status, 503);
  t.true(health.ms < 4_000, `healthz in ${health.ms} ms`);
  t.is(read.status, 200, 'a read needs no write lock and is answered while a batch waits');
  t.is(held.status, 503, held.text);
  t.is(held.body.error.code, 'store_unavailable');
  t.is(held.headers.get('retry-after'), '1');
  t.true(held.ms < 10_000, `the claim was answered in ${held.ms} ms`);
  other.exec('ROLLBACK');
  t.is((await app.request('GET', '/v1/healthz')).status, 200);
  t.is((await claim(app, gw, 'held', ticketClaim('held'))).status, 201, 'the refused claim left its key unused');
});
