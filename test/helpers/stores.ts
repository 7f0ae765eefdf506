import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Config } from '../../src/config/config.js';
import { readConfig } from '../../src/config/config.js';

export type StoreKind = 'sqlite' | 'postgres';

const ADMIN_URL = process.env.GATEHOUSE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let postgresReachable: Promise<boolean> | undefined;

/**
 * The stores every behaviour test runs against. PostgreSQL joins when it answers;
 * in CI (CI=true) a missing PostgreSQL is a failure, never a silent skip.
 */
export async function storeKinds(): Promise<StoreKind[]> {
  postgresReachable ??= probePostgres();
  if (await postgresReachable) return ['sqlite', 'postgres'];
  const message = `PostgreSQL is not reachable at ${ADMIN_URL}: the PostgreSQL variants of these tests are SKIPPED`;
  if (process.env.CI === 'true') throw new Error(`${message} — and CI=true requires them. Start it with pg_ctlcluster.`);
  process.stderr.write(`\n!!!!! ${message} !!!!!\n\n`);
  return ['sqlite'];
}

async function probePostgres(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface TestStore {
  kind: StoreKind;
  dataDir: string;
  /** `--db FILE` or `--database-url URL`, for child processes. */
  cliArgs: string[];
  config: Config;
  drop(): Promise<void>;
}

/** A fresh data dir with key files, and a fresh database: an empty SQLite file or a new PostgreSQL database. */
export async function createTestStore(kind: StoreKind): Promise<TestStore> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-'));
  for (const name of ['master.key', 'signing.key']) {
    fs.writeFileSync(path.join(dataDir, name), crypto.randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
  }
  if (kind === 'sqlite') {
    const file = path.join(dataDir, 'gatehouse.db');
    return {
      kind, dataDir, cliArgs: ['--data-dir', dataDir, '--db', file],
      config: readConfig({ dataDir, db: file }, testEnv()),
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const database = `gh_test_${crypto.randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return {
    kind, dataDir, cliArgs: ['--data-dir', dataDir, '--database-url', url.toString()],
    config: readConfig({ dataDir, databaseUrl: url.toString() }, testEnv()),
    drop: async () => {
      await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** The service logs nothing in tests unless GATEHOUSE_LOG_LEVEL asks for it while debugging. */
function testEnv(): NodeJS.ProcessEnv {
  return { GATEHOUSE_LOG_LEVEL: process.env.GATEHOUSE_LOG_LEVEL ?? 'silent' };
}
