import test from 'ava';
import pg from 'pg';
import { sql } from 'kysely';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { createTestStore, storeKinds } from '../helpers/stores.js';

test('[postgres] the store reads int8 as a number without changing pg\'s parsers for the rest of the process', async (t) => {
  if (!(await storeKinds()).includes('postgres')) {
    t.pass('PostgreSQL not reachable (storeKinds said so)');
    return;
  }
  const testStore = await createTestStore('postgres');
  t.teardown(() => testStore.drop());
  const url = (testStore.config.store as { url: string }).url;
  const store = new PostgresStore(url, { poolSize: 1 });
  t.teardown(() => store.close());
  const { rows } = await sql<{ n: unknown }>`select 9007199254740991::int8 as n`.execute(store.db);
  t.is(rows[0]!.n, Number.MAX_SAFE_INTEGER);
  await t.throwsAsync(sql`select 9007199254740993::int8 as n`.execute(store.db), { message: /exceeds 2\^53/ });

  const plain = new pg.Client({ connectionString: url });
  await plain.connect();
  t.teardown(() => plain.end());
  t.is((await plain.query('select 42::int8 as n')).rows[0].n, '42', 'another pg client keeps pg\'s default: int8 as a string');
});
