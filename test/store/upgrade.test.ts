import test from 'ava';
import { Migrator } from 'kysely';
import { migrationProvider } from '../../schema/migrations/index.js';
import { connectStore } from '../../src/store/open-store.js';
import { httpRequest, startTestApp } from '../helpers/app.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/stores.js';

/** The store at an older schema, as a deployment of the previous release left it. */
async function storeAt(testStore: TestStore, migration: string) {
  const store = connectStore(testStore.config.store);
  const { error } = await new Migrator({ db: store.db, provider: migrationProvider }).migrateTo(migration);
  if (error) throw error;
  return store;
}

for (const kind of await storeKinds()) {
  test(`[${kind}] a database from before migration 0003 (operations with command_seq) upgrades at start, and its operations and new claims both work`, async (t) => {
    const testStore = await createTestStore(kind);
    t.teardown(() => testStore.drop());
    const old = await storeAt(testStore, '0002-operation-reports');
    const now = new Date().toISOString();
    await old.db.insertInto('operations' as any).values({
      id: 'op_before', account_id: 'acme', idempotency_key: 'k-before', fingerprint: 'f'.repeat(64), method: 'POST', route: '/v1/tickets',
      state: 'succeeded', business_key: null, exclusive_scope: null, agent_run_id: null, provider_ref: null, requested_by: 'prn_x',
      lease_seconds: 30, lease_token_hash: null, lease_expires_at: null, command_seq: 1, response_seq: null, response_status: 201,
      approval_id: null, created_at: now, updated_at: now, version: 3,
    }).execute();
    await old.close();

    const { context, server } = await startTestApp(null, kind, { store: testStore });
    try {
      const row = await context.store.db.selectFrom('operations').selectAll().where('id', '=', 'op_before').executeTakeFirstOrThrow();
      t.false('command_seq' in row, 'the column is gone');
      t.like(row, { idempotency_key: 'k-before', state: 'succeeded', response_status: 201, version: 3 });
      const { key } = await context.principals.create({ account_id: 'acme', roles: ['gateway'] });
      const claim = (idempotencyKey: string) => httpRequest(server.url, 'POST', '/v1/operations', {
        key, headers: { 'idempotency-key': idempotencyKey }, body: { method: 'POST', route: '/v1/tickets', command: { title: 'after the upgrade' } },
      });
      const fresh = await claim('k-after');
      t.is(fresh.status, 201);
      t.is(fresh.body.outcome, 'created');
      const old = await claim('k-before');
      t.is(old.status, 422, 'the old operation still owns its key (a different payload is refused)');
      t.is(old.body.error.code, 'fingerprint_mismatch');
      t.is(old.body.error.operation_id, 'op_before');
    } finally {
      await server.close();
      await context.close();
    }
  });
}
