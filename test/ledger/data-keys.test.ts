import crypto from 'node:crypto';
import test from 'ava';
import { DataKeys } from '../../src/ledger/data-keys.js';
import { loadSodium } from '../../src/core/sodium.js';
import { systemClock } from '../../src/core/time.js';
import { startTestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';

for (const kind of await storeKinds()) {
  test(`[${kind}] a shredding that rolled back leaves the key in use: what its transaction read is not cached`, async (t) => {
    const { store } = (await startTestApp(t, kind)).context;
    const keys = new DataKeys(await loadSodium(), crypto.randomBytes(32), systemClock);
    const key = await store.transact((trx) => keys.forAccount(trx, 'acme'));
    t.truthy(key);
    await t.throwsAsync(store.transact(async (trx) => {
      t.true(await keys.shred(trx, 'acme'));
      t.is(await keys.forAccount(trx, 'acme'), null, 'inside the shredding transaction the key is gone');
      throw new Error('boom');
    }), { message: 'boom' });
    t.deepEqual(await store.transact((trx) => keys.forAccount(trx, 'acme')), key, 'the rolled-back shredding left the key, and the cache says so');
  });

  test(`[${kind}] a key made and then rolled back is not cached: the next transaction makes the account anew and keeps it`, async (t) => {
    const { store } = (await startTestApp(t, kind)).context;
    const masterKey = crypto.randomBytes(32);
    const keys = new DataKeys(await loadSodium(), masterKey, systemClock);
    await t.throwsAsync(store.transact(async (trx) => {
      t.truthy(await keys.forAccount(trx, 'fresh'));
      throw new Error('boom');
    }), { message: 'boom' });
    const key = await store.transact((trx) => keys.forAccount(trx, 'fresh'));
    const stored = await store.db.selectFrom('accounts').select('wrapped_data_key').where('id', '=', 'fresh').executeTakeFirst();
    t.truthy(stored?.wrapped_data_key, 'the account row the key came from is committed');
    // A second cache, empty, reads the stored key: the same one the first hands out.
    const fresh = new DataKeys(await loadSodium(), masterKey, systemClock);
    t.deepEqual(await store.transact((trx) => fresh.forAccount(trx, 'fresh')), key);
  });
}
