// Several real `gatehouse serve` processes on one fresh PostgreSQL database: the deployment the README describes under "PostgreSQL: several instances".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { ExecutionContext } from 'ava';
import { createTestStore, storeKinds, type TestStore } from '../helpers/stores.js';
import { runCli, spawnGatehouse, type CliResult, type SpawnedGatehouse } from '../helpers/server-process.js';

/** True when PostgreSQL answers; storeKinds() warns loudly when it does not, and throws under CI=true. */
export async function postgresAvailable(): Promise<boolean> {
  return (await storeKinds()).includes('postgres');
}

export interface Cluster {
  store: TestStore;
  url: string;
  /** `--data-dir … --database-url …`: the shared key files and the database. */
  storeArgs: string[];
  /** The same keys passed the other documented way: GATEHOUSE_DATABASE_URL, GATEHOUSE_MASTER_KEY, GATEHOUSE_SIGNING_KEY. */
  env: NodeJS.ProcessEnv;
  instances: SpawnedGatehouse[];
  /**
   * Instance i > 0 is configured through the environment only, with an empty data dir of its own.
   * `extraEnv` is added for every instance started (e.g. a log level, where a test reads the logs).
   */
  start(count: number, extraEnv?: NodeJS.ProcessEnv): Promise<SpawnedGatehouse[]>;
  query<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  cli(args: string[]): Promise<CliResult>;
}

export async function createCluster(t: ExecutionContext): Promise<Cluster> {
  const store = await createTestStore('postgres');
  const url = store.cliArgs[store.cliArgs.indexOf('--database-url') + 1]!;
  const env: NodeJS.ProcessEnv = {
    GATEHOUSE_DATABASE_URL: url,
    GATEHOUSE_MASTER_KEY: fs.readFileSync(path.join(store.dataDir, 'master.key'), 'utf8').trim(),
    GATEHOUSE_SIGNING_KEY: fs.readFileSync(path.join(store.dataDir, 'signing.key'), 'utf8').trim(),
  };
  const pool = new pg.Pool({ connectionString: url, max: 2, application_name: 'gatehouse-test-harness' });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cluster-'));
  const cluster: Cluster = {
    store, url, storeArgs: store.cliArgs, env, instances: [],
    start: async (count, extraEnv = {}) => {
      const started = await Promise.all(Array.from({ length: count }, (_, i) => {
        const n = cluster.instances.length + i;
        return n === 0
          ? spawnGatehouse({ args: store.cliArgs, env: extraEnv, name: `gatehouse serve #${n} (key files)` })
          : spawnGatehouse({ args: ['--data-dir', path.join(scratch, `instance-${n}`)], env: { ...env, ...extraEnv }, name: `gatehouse serve #${n} (environment)` });
      }));
      cluster.instances.push(...started);
      return started;
    },
    query: async (text, values) => (await pool.query(text, values)).rows,
    cli: (args) => runCli(args),
  };
  t.teardown(async () => {
    await Promise.all(cluster.instances.map((i) => i.stop()));
    await pool.end();
    fs.rmSync(scratch, { recursive: true, force: true });
    await store.drop();
  });
  return cluster;
}

/** A gateway key per account, made through `POST /v1/principals` with the first admin's key (no extra process). */
export async function gatewayKeys(cluster: Cluster, accounts: string[]): Promise<string[]> {
  const admin = cluster.instances.find((i) => i.adminKey);
  if (!admin) throw new Error('no instance printed the first admin key');
  return Promise.all(accounts.map(async (account) => {
    const r = await fetch(`${admin.url}/v1/principals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.adminKey}` },
      body: JSON.stringify({ account_id: account, roles: ['gateway'] }),
    });
    const body = (await r.json()) as { key?: string };
    if (r.status !== 201 || !body.key) throw new Error(`POST /v1/principals answered ${r.status} ${JSON.stringify(body)}`);
    return body.key;
  }));
}
