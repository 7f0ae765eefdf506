import test from 'ava';
import { httpRequest } from '../helpers/app.js';
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
