import { Migrator } from 'kysely';
import { migrationProvider } from '../../schema/migrations/index.js';
import { PostgresStore } from './postgres-store.js';
import { SqliteStore } from './sqlite-store.js';
import type { Store } from './store.js';

export type StoreLocation = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** The store at `location`, its schema as it is (tests use it to stand up a database of an older release). */
export function connectStore(location: StoreLocation): Store {
  return location.kind === 'sqlite' ? new SqliteStore(location.file) : new PostgresStore(location.url);
}

/** Opens the store and brings its schema up to date (on PostgreSQL under Kysely's advisory lock, so two instances may start at once). */
export async function openStore(location: StoreLocation): Promise<Store> {
  const store = connectStore(location);
  try {
    const migrator = new Migrator({ db: store.db, provider: migrationProvider });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
    return store;
  } catch (error) {
    await store.close();
    throw error;
  }
}
