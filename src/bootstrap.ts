import fs from 'node:fs';
import type { Config } from './config/config.js';
import { createKeyFiles, keyFilesExist } from './config/key-files.js';
import type { AppContext } from './context.js';

export const ADMIN_ACCOUNT = 'admin';

/** A data dir that is missing or empty gets initialised by `serve`, so `npm start` works on a fresh clone. */
export function needsInitialisation(config: Config): boolean {
  if (config.masterKeyBase64 && config.signingKeyBase64) return false;
  return !fs.existsSync(config.dataDir) || fs.readdirSync(config.dataDir).length === 0;
}

/** Creates the key files (unless the environment supplies the keys); refuses to overwrite existing ones. */
export function createKeys(config: Config): void {
  if (config.masterKeyBase64 && config.signingKeyBase64) return;
  createKeyFiles(config.dataDir);
}

export function hasKeyFiles(config: Config): boolean {
  return keyFilesExist(config.dataDir);
}

/** The first admin principal, made when the store has no principal yet; its key is shown once. */
export async function createFirstAdmin(context: AppContext): Promise<string | null> {
  const existing = await context.store.db.selectFrom('principals').select('id').limit(1).executeTakeFirst();
  if (existing) return null;
  const created = await context.principals.createFirst({ account_id: ADMIN_ACCOUNT, roles: ['admin'], name: 'first admin' });
  return created?.key ?? null;
}
