import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { httpRequest } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';
import { migrationProvider } from '../../schema/migrations/index.js';
import { createCluster, postgresAvailable } from './cluster.js';

if (await postgresAvailable()) {
  test('[postgres] two instances started at once on a fresh database both come up with one schema, one ledger id and one first admin', async (t) => {
    const cluster = await createCluster(t);
    const [a, b] = await cluster.start(2);
    const ledgerIds = await Promise.all([a!, b!].map(async (i) => (await httpRequest(i.url, 'GET', '/v1/healthz')).body?.ledger_id));
    const [{ value: stored }] = await cluster.query<{ value: string }>(`select value from meta where key = 'ledger_id'`);
    t.deepEqual(ledgerIds, [stored, stored]);
    const applied = (await cluster.query<{ name: string }>(`select name from kysely_migration order by name`)).map((r) => r.name);
    t.deepEqual(applied, Object.keys(await migrationProvider.getMigrations()).sort(), 'every migration applied exactly once');

    const printed = [a!, b!].map((i) => i.adminKey).filter((k) => k !== null);
    t.is(printed.length, 1, 'exactly one instance prints the first admin key');
    t.deepEqual(await cluster.query(`select account_id, roles from principals`), [{ account_id: 'admin', roles: '["admin"]' }]);
    for (const instance of [a!, b!]) {
      const created = await httpRequest(instance.url, 'POST', '/v1/principals', { key: printed[0]!, body: { account_id: 'acme', roles: ['gateway'] } });
      t.is(created.status, 201, `the admin key works on ${instance.url}`);
    }
  });
}

if (await postgresAvailable()) {
  test('[postgres] an instance started with other key files than the database was initialised with refuses to start and says why', async (t) => {
    const cluster = await createCluster(t);
    await cluster.start(1);
    const stranger = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-stranger-'));
    t.teardown(() => fs.rmSync(stranger, { recursive: true, force: true }));
    const r = await runCli(['serve', '--port', '0', '--data-dir', stranger, '--database-url', cluster.url]);
    t.is(r.code, 2, r.stdout + r.stderr);
    t.regex(r.stderr, /initialised with another (signing|master) key.*share the same key files/);
    t.notRegex(r.stdout, /listening/);
  });
}
