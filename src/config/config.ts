import path from 'node:path';
import { keyFilesExist } from './key-files.js';
import type { StoreLocation } from '../store/open-store.js';

/** Everything the process is told from outside, read once. Only this module reads process.env. */
export interface Config {
  dataDir: string;
  store: StoreLocation;
  /** base64 key material from the environment; when absent the data dir's key files are used. */
  masterKeyBase64: string | null;
  signingKeyBase64: string | null;
  logLevel: string;
  /** The policies file (`--config`); null: no policies. */
  policiesFile: string | null;
  /**
   * Test-only: milliseconds added to this process's wall clock (GATEHOUSE_TEST_CLOCK_OFFSET_MS),
   * so a test can run two instances whose clocks disagree. Decisions on PostgreSQL do not read
   * the wall clock (src/store/database-clock.ts); on SQLite it shows everywhere.
   */
  clockOffsetMs: number;
}

export interface StoreOptions {
  dataDir?: string;
  db?: string;
  databaseUrl?: string;
  /** `--config`: the policies file. */
  configFile?: string;
}

/** A store location the user gave that cannot be one (a usage error: exit 2). */
export class StoreLocationError extends Error {}

/**
 * Why `url` is no PostgreSQL connection URL, or null. node-postgres reads anything else as a
 * path relative to `postgres://base`, so `notaurl` became the host `base` and a `mysql://` URL
 * was tried as PostgreSQL: the user heard about a host or role they never named. Accepted: the
 * postgres: and postgresql: schemes, and socket: or an absolute path for a Unix socket. The
 * message never repeats the URL, which may hold a password.
 */
export function postgresUrlProblem(url: string): string | null {
  if (url.startsWith('/')) return null;
  let scheme: string;
  try {
    scheme = new URL(url).protocol;
  } catch {
    return 'is not a URL: give postgres://user@host:port/database';
  }
  return ['postgres:', 'postgresql:', 'socket:'].includes(scheme) ? null : `names ${scheme.slice(0, -1)}, not PostgreSQL: give postgres://user@host:port/database`;
}

export function readConfig(options: StoreOptions, env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(options.dataDir ?? env.GATEHOUSE_DATA_DIR ?? defaultDataDir(options.db));
  const databaseUrl = options.databaseUrl ?? env.GATEHOUSE_DATABASE_URL;
  const problem = options.db || !databaseUrl ? null : postgresUrlProblem(databaseUrl);
  if (problem !== null) throw new StoreLocationError(`${options.databaseUrl !== undefined ? '--database-url' : 'GATEHOUSE_DATABASE_URL'} ${problem}`);
  const store: StoreLocation = options.db
    ? { kind: 'sqlite', file: path.resolve(options.db) }
    : databaseUrl
      ? { kind: 'postgres', url: databaseUrl }
      : { kind: 'sqlite', file: path.join(dataDir, 'gatehouse.db') };
  return {
    dataDir,
    store,
    masterKeyBase64: env.GATEHOUSE_MASTER_KEY ?? null,
    signingKeyBase64: env.GATEHOUSE_SIGNING_KEY ?? null,
    logLevel: env.GATEHOUSE_LOG_LEVEL ?? (env.NODE_ENV === 'test' ? 'silent' : 'info'),
    policiesFile: options.configFile ? path.resolve(options.configFile) : null,
    clockOffsetMs: clockOffset(env.GATEHOUSE_TEST_CLOCK_OFFSET_MS),
  };
}

/**
 * ./data, unless --db names a database whose directory holds the keys: a SQLite ledger
 * normally lives in its data dir (DATA_DIR/gatehouse.db), so `--db FILE` alone finds them.
 */
export function defaultDataDir(db: string | undefined): string {
  const beside = db === undefined ? null : path.dirname(path.resolve(db));
  return beside !== null && keyFilesExist(beside) ? beside : 'data';
}

/** What `gatehouse proxy` reads from the environment: the key (so it need not sit in a process list) and the log level. */
export function readProxyEnv(env: NodeJS.ProcessEnv = process.env): { apiKey: string | null; logLevel: string } {
  return { apiKey: env.GATEHOUSE_API_KEY ?? null, logLevel: env.GATEHOUSE_LOG_LEVEL ?? 'info' };
}

function clockOffset(text: string | undefined): number {
  if (text === undefined || text === '') return 0;
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`GATEHOUSE_TEST_CLOCK_OFFSET_MS must be a whole number of milliseconds, not "${text}"`);
  return value;
}
