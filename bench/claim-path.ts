// The claim path without HTTP: CPU microseconds per new-key claim through the real
// Operations domain on a durable store (SQLite group commit, or PostgreSQL), 50 claims in
// flight. It isolates the ledger and store cost from Koa's, so a change to either shows here.
// On PostgreSQL it also reads the CPU of the service's own backends (from /proc, by the pids
// pg_stat_activity gives for application_name 'gatehouse'): the database's share of a claim.
//
//   npx tsx bench/claim-path.ts [--postgres] [--claims N] [--in-flight N]
import fs from 'node:fs';
import pg from 'pg';
import { startTestApp } from '../test/helpers/app.js';
import type { StoreLocation } from '../src/store/open-store.js';

export interface ClaimPathResult {
  claims: number;
  claims_per_sec: number;
  cpu_us_per_claim: number;
  /** PostgreSQL only: the service's backends' CPU per claim. */
  database_cpu_us_per_claim?: number;
}

export async function benchClaimPath(options: { quick?: boolean; postgres?: boolean; claims?: number; inFlight?: number } = {}): Promise<ClaimPathResult> {
  const app = await startTestApp(null, options.postgres ? 'postgres' : 'sqlite');
  try {
    const principal = (await app.context.principals.authenticate(await app.keyFor('acme', 'gateway')))!;
    // A new key names a new intended write, so each carries its own command (as in http-claims):
    // one command for every key would make each claim a repeat for the duplicates report.
    const bodyFor = (key: string) => ({ method: 'POST', route: '/v1/tickets', command: { title: `Disk full on ${key}`, priority: 2, tags: ['pager', 'db'] } });
    const claims = options.claims ?? (options.quick ? 2000 : 10_000);
    const inFlight = options.inFlight ?? 50;
    const run = async (count: number, prefix: string) => {
      let next = 0;
      await Promise.all(Array.from({ length: inFlight }, async () => {
        while (next < count) {
          const key = `${prefix}-${next++}`;
          await app.context.operations.claim(principal, key, bodyFor(key));
        }
      }));
    };
    await run(500, 'warm');
    const backends = options.postgres ? await backendPids(app.store.config.store) : [];
    const databaseBefore = jiffies(backends);
    const cpu = process.cpuUsage();
    const began = performance.now();
    await run(claims, 'bench');
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - began) / 1000;
    const result: ClaimPathResult = { claims, claims_per_sec: Math.round(claims / seconds), cpu_us_per_claim: Math.round((used.user + used.system) / claims) };
    if (options.postgres) result.database_cpu_us_per_claim = Math.round(((jiffies(backends) - databaseBefore) * 10_000) / claims);
    return result;
  } finally {
    await app.close();
  }
}

async function backendPids(store: StoreLocation): Promise<number[]> {
  if (store.kind !== 'postgres') return [];
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'gatehouse' AND datname = current_database()`);
    return rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}

/** utime + stime of the processes, in jiffies (10 ms); a process gone since is counted as 0. */
function jiffies(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(rest[11]) + Number(rest[12]);
    } catch {
      // exited
    }
  }
  return total;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const postgres = process.argv.includes('--postgres');
  const at = process.argv.indexOf('--claims');
  const claims = at > 0 ? Number(process.argv[at + 1]) : undefined;
  const inFlightAt = process.argv.indexOf('--in-flight');
  const inFlight = inFlightAt > 0 ? Number(process.argv[inFlightAt + 1]) : undefined;
  process.stdout.write(JSON.stringify(await benchClaimPath({ postgres, claims, inFlight })) + '\n');
}
