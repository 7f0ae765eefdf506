// The claim, report and replay paths without HTTP: CPU microseconds per new-key claim, per
// `sent` and `completed` report, per first replay of each operation just completed, and per
// replay of a few finished operations replayed over and over, through the real
// Operations domain on a durable store (SQLite group commit, or PostgreSQL), 50 in flight. It
// isolates the ledger and store cost from Koa's, so a change to either shows here. Next to the
// product's claims it measures the lean claim (bench/lean-claims.ts) the same way: the floor of
// this design's CPU per claim without HTTP, in the same run (SQLite only); --lean-parts also
// measures it without incident review's indexes and trigger and without fsync (what it is made of).
// On PostgreSQL it also reads the CPU of the service's own backends (from /proc, by the pids
// pg_stat_activity gives for application_name 'gatehouse'): the database's share of each operation.
// On Linux each cost also says how much of its CPU V8's helper threads spent (its optimising
// compiler, its parallel GC): with the default warm-up the compiler is still at work on the product's
// claim path, which `npm run bench` therefore also measures after --warm 20000.
//
//   npx tsx bench/claim-path.ts [--postgres] [--claims N] [--warm N] [--in-flight N] [--only claims|lean|reports|replays] [--lean-parts] [--profile DIR]
//
// --claims N: operations measured on each path (10,000; 2,000 with `quick`). --warm N: new-key
// claims made first (500), each side. Under callgrind (bench/claim-instructions.ts runs it so) each
// measured run is a dump of its own. --only: the paths
// measured (all three by default; repeatable). --profile writes a CPU profile of each measured
// run (and nothing else: not the start-up, the warm-up or the set-up claims) to
// DIR/<path>.cpuprofile, sampled every 100 µs.
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { Principal } from '../src/principals/roles.js';
import type { StoreLocation } from '../src/store/open-store.js';
import { startTestApp, type TestApp } from '../test/helpers/app.js';
import { openLeanClaims, type LeanClaims, type LeanReport, type LeanVariant } from './lean-claims.js';

export interface PathCost {
  count: number;
  per_sec: number;
  cpu_us: number;
  /**
   * Linux: of cpu_us, what the process's other threads spent: V8's optimising compiler and its
   * parallel GC (better-sqlite3 runs on the main thread). Large while V8 is still compiling the
   * code a claim runs, so it tells a cold measurement from a warm one.
   */
  helper_threads_cpu_us?: number;
  /** PostgreSQL only: the service's backends' CPU per operation. */
  database_cpu_us?: number;
}

export interface ClaimPathResult {
  /** New-key claims (the names the earlier sessions' results use). */
  claims?: number;
  claims_per_sec?: number;
  cpu_us_per_claim?: number;
  helper_threads_cpu_us_per_claim?: number;
  database_cpu_us_per_claim?: number;
  /** The lean claim's new-key claims (SQLite): the floor of cpu_us_per_claim. */
  lean?: PathCost;
  /** With `leanParts`: the lean claim without incident review's indexes and trigger, and without fsync. */
  lean_without_review?: PathCost;
  lean_without_fsync?: PathCost;
  sent?: PathCost;
  completed?: PathCost;
  /** The lean claim's `sent` and `completed` reports (SQLite): the floor of the reports' CPU. */
  lean_sent?: PathCost;
  lean_completed?: PathCost;
  /** Each operation `completed` measured, replayed once: an agent retrying a write whose answer was lost. */
  first_replays?: PathCost;
  replays?: PathCost;
  /** The lean replay (SQLite): the floor of replays' CPU. */
  lean_replays?: PathCost;
}

export type PathName = 'claims' | 'lean' | 'reports' | 'replays';

export interface ClaimPathOptions {
  quick?: boolean;
  postgres?: boolean;
  /** Operations measured on each path. */
  claims?: number;
  /** New-key claims made before the claims (and lean claims) measured: 500. */
  warm?: number;
  inFlight?: number;
  only?: PathName[];
  profileDir?: string;
  /** Also the lean claim with parts taken away (lean-claims.ts LeanVariant): what its floor is made of. */
  leanParts?: boolean;
}

export async function benchClaimPath(options: ClaimPathOptions = {}): Promise<ClaimPathResult> {
  const app = await startTestApp(null, options.postgres ? 'postgres' : 'sqlite');
  // The HTTP server's periodic passes (lease and expiry sweeps every second, checkpoints) are
  // not part of a claim; under callgrind, where everything runs ~50 times slower, they would run
  // ~50 times as often per claim and count as the claim's. The claims below never use the server.
  if (process.env.GATEHOUSE_CALLGRIND === '1') await app.server.close();
  const wanted = (name: PathName) => !options.only || options.only.includes(name);
  try {
    const principal = (await app.context.principals.authenticate(await app.keyFor('acme', 'gateway')))!;
    const paths = new ClaimPaths(app, principal, options.inFlight ?? 50);
    const count = options.claims ?? (options.quick ? 2000 : 10_000);
    const warm = options.warm ?? 500;
    await paths.claims(warm, 'warm');
    const backends = options.postgres ? await backendPids(app.store.config.store) : [];
    const measured = (name: string, run: () => Promise<unknown>) =>
      measure(count, run, backends, name, options.profileDir && path.join(options.profileDir, `${name}.cpuprofile`));
    const result: ClaimPathResult = {};
    if (wanted('claims')) {
      const claims = await measured('claims', () => paths.claims(count, 'bench'));
      result.claims = claims.count;
      result.claims_per_sec = claims.per_sec;
      result.cpu_us_per_claim = claims.cpu_us;
      if (claims.helper_threads_cpu_us !== undefined) result.helper_threads_cpu_us_per_claim = claims.helper_threads_cpu_us;
      if (claims.database_cpu_us !== undefined) result.database_cpu_us_per_claim = claims.database_cpu_us;
    }
    if (wanted('lean') && !options.postgres) {
      const lean = (variant: LeanVariant) => leanClaims(count, warm, options.inFlight ?? 50, variant, (run) => measured('lean', run));
      result.lean = await lean({});
      if (options.leanParts) {
        result.lean_without_review = await lean({ withoutReview: true });
        result.lean_without_fsync = await lean({ synchronous: 'OFF' });
      }
    }
    if (wanted('reports')) {
      await paths.finish(await paths.claims(500, 'warm-report'));
      const leases = await paths.claims(count, 'report');
      result.sent = await measured('sent', () => paths.report(leases, 'sent'));
      result.completed = await measured('completed', () => paths.report(leases, 'completed'));
      result.first_replays = await measured('first-replays', () => paths.replays(leases, leases.length));
      if (!options.postgres) {
        const lean = await leanReportCosts(count, options.inFlight ?? 50, measured);
        result.lean_sent = lean.sent;
        result.lean_completed = lean.completed;
      }
    }
    if (wanted('replays')) {
      // A few finished operations, each replayed many times: as the HTTP bench's single key, but spread.
      const finished = await paths.claims(100, 'replay');
      await paths.finish(finished);
      await paths.replays(finished, 500);
      result.replays = await measured('replays', () => paths.replays(finished, count));
      if (!options.postgres) result.lean_replays = await leanReplays(count, options.inFlight ?? 50, (run) => measured('lean-replays', run));
    }
    return result;
  } finally {
    await app.close();
  }
}

/** CPU of this process (user + system), of the database's backends, and wall time over `run`, per operation; a CPU profile of it to `profileFile`. */
async function measure(count: number, run: () => Promise<unknown>, backends: number[], name: string, profileFile?: string): Promise<PathCost> {
  const profiler = profileFile ? await startProfiler() : null;
  await callgrind('--zero');
  const databaseBefore = jiffies(backends);
  const threadsBefore = threadCpuNs();
  const cpu = process.cpuUsage();
  const began = performance.now();
  await run();
  await callgrind(`--dump=${name}`);
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - began) / 1000;
  const threadsAfter = threadCpuNs();
  const cost: PathCost = { count, per_sec: Math.round(count / seconds), cpu_us: Math.round((used.user + used.system) / count) };
  if (threadsBefore && threadsAfter) {
    const helpers = (threadsAfter.all - threadsBefore.all) - (threadsAfter.main - threadsBefore.main);
    cost.helper_threads_cpu_us = Math.round(helpers / 1000 / count);
  }
  if (backends.length > 0) cost.database_cpu_us = Math.round(((jiffies(backends) - databaseBefore) * 10_000) / count);
  if (profiler && profileFile) {
    const { profile } = await profiler.post('Profiler.stop');
    fs.mkdirSync(path.dirname(profileFile), { recursive: true });
    fs.writeFileSync(profileFile, JSON.stringify(profile));
    profiler.disconnect();
  }
  return cost;
}

/**
 * Under `valgrind --tool=callgrind` (GATEHOUSE_CALLGRIND=1): counters zeroed before a measured run
 * and dumped after it, so each dump counts the instructions of that run alone. Instruction counts
 * do not move with the load on a shared host, as CPU time does. callgrind_control reaches the
 * process through vgdb while its event loop keeps running, hence spawned and awaited, not synchronous.
 */
async function callgrind(action: string): Promise<void> {
  if (process.env.GATEHOUSE_CALLGRIND !== '1') return;
  const { spawn } = await import('node:child_process');
  await new Promise<void>((resolve, reject) => {
    const control = spawn('callgrind_control', [action, String(process.pid)], { stdio: 'ignore' });
    control.on('error', reject);
    control.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control ${action}: exit ${code}`))));
  });
}

async function startProfiler(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return session;
}

/** The lean claim's new-key claims, `inFlight` at a time, with the bodies the product's claims carry. */
async function leanClaims(count: number, warm: number, inFlight: number, variant: LeanVariant, measured: (run: () => Promise<unknown>) => Promise<PathCost>): Promise<PathCost> {
  const lean = await openLeanClaims(variant);
  try {
    const claims = (prefix: string, n: number) => inTurns(n, inFlight, (i) => lean.claim(`${prefix}-${i}`, ClaimPaths.bodyFor(`${prefix}-${i}`)));
    await claims('warm', warm);
    return await measured(() => claims('bench', count));
  } finally {
    lean.close();
  }
}

/** The lean replay, as `ClaimPaths.replays`: 100 finished operations, each replayed in turn. */
async function leanReplays(count: number, inFlight: number, measured: (run: () => Promise<unknown>) => Promise<PathCost>): Promise<PathCost> {
  const lean = await openLeanClaims();
  try {
    const keys = Array.from({ length: 100 }, (_, i) => `replay-${i}`);
    await leanFinish(lean, await leanLeases(lean, keys, inFlight), inFlight);
    const replays = (n: number) => inTurns(n, inFlight, async (i) => {
      const key = keys[i % keys.length]!;
      const answer = await lean.replay(key, ClaimPaths.bodyFor(key)) as { outcome: string; response: { status: number } };
      if (answer.outcome !== 'replayed' || answer.response.status !== 201) throw new Error(`lean replay of ${key}: ${answer.outcome}`);
    });
    await replays(500);
    return await measured(() => replays(count));
  } finally {
    lean.close();
  }
}

/** New-key claims on the lean claim, as `ClaimPaths.claims`: the leases its reports need. */
async function leanLeases(lean: LeanClaims, keys: string[], inFlight: number): Promise<Claimed[]> {
  const leases: Claimed[] = [];
  await inTurns(keys.length, inFlight, async (i) => {
    const answer = await lean.claim(keys[i]!, ClaimPaths.bodyFor(keys[i]!)) as { operation: { id: string }; lease: { token: string } };
    leases.push({ key: keys[i]!, id: answer.operation.id, token: answer.lease.token });
  });
  return leases;
}

/** The lean claim's reports, as `ClaimPaths.report`. */
function leanReports(lean: LeanClaims, leases: Claimed[], type: 'sent' | 'completed', inFlight: number): Promise<void> {
  return inTurns(leases.length, inFlight, async (i) => {
    const { id, token, key } = leases[i]!;
    await lean.report(id, reportBody(type, token, key));
  });
}

/** `sent` then `completed` on each lease, as `ClaimPaths.finish`. */
async function leanFinish(lean: LeanClaims, leases: Claimed[], inFlight: number): Promise<void> {
  await leanReports(lean, leases, 'sent', inFlight);
  await leanReports(lean, leases, 'completed', inFlight);
}

/** The report both the product's and the lean claim's paths send: `completed` answers the claim's write with 201. */
function reportBody(type: 'sent' | 'completed', token: string, key: string): LeanReport {
  return type === 'sent'
    ? { type, lease_token: token }
    : { type, lease_token: token, outcome: 'succeeded', response: { status: 201, body: { ticket: key } } };
}

/** The lean claim's `sent` and `completed` reports, as the product's `reports` path: the floor of a report's CPU. */
async function leanReportCosts(count: number, inFlight: number, measured: (name: string, run: () => Promise<unknown>) => Promise<PathCost>): Promise<{ sent: PathCost; completed: PathCost }> {
  const lean = await openLeanClaims();
  try {
    await leanFinish(lean, await leanLeases(lean, Array.from({ length: 500 }, (_, i) => `warm-report-${i}`), inFlight), inFlight);
    const leases = await leanLeases(lean, Array.from({ length: count }, (_, i) => `report-${i}`), inFlight);
    const sent = await measured('lean-sent', () => leanReports(lean, leases, 'sent', inFlight));
    const completed = await measured('lean-completed', () => leanReports(lean, leases, 'completed', inFlight));
    return { sent, completed };
  } finally {
    lean.close();
  }
}

/** `count` calls of `run(i)`, `inFlight` at a time. */
async function inTurns(count: number, inFlight: number, run: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < count) await run(next++);
  }));
}

interface Claimed {
  key: string;
  id: string;
  token: string;
}

class ClaimPaths {
  constructor(private readonly app: TestApp, private readonly principal: Principal, private readonly inFlight: number) {}

  /** A new key names a new intended write, so each carries its own command (as in http-claims): one command for every key would make each claim a repeat for the duplicates report. */
  static bodyFor(key: string) {
    return { method: 'POST', route: '/v1/tickets', command: { title: `Disk full on ${key}`, priority: 2, tags: ['pager', 'db'] } };
  }

  async claims(count: number, prefix: string): Promise<Claimed[]> {
    const out: Claimed[] = [];
    await this.each(count, async (i) => {
      const key = `${prefix}-${i}`;
      const answer = await this.app.context.operations.claim(this.principal, key, ClaimPaths.bodyFor(key));
      if (!answer.lease) throw new Error(`claim ${key}: ${answer.outcome}`);
      out.push({ key, id: answer.operation.id, token: answer.lease.token });
    });
    return out;
  }

  async report(leases: Claimed[], type: 'sent' | 'completed'): Promise<void> {
    await this.each(leases.length, async (i) => {
      const { id, token, key } = leases[i]!;
      await this.app.context.operations.report(this.principal, id, reportBody(type, token, key));
    });
  }

  async finish(leases: Claimed[]): Promise<void> {
    await this.report(leases, 'sent');
    await this.report(leases, 'completed');
  }

  async replays(finished: Claimed[], count: number): Promise<void> {
    await this.each(count, async (i) => {
      const { key } = finished[i % finished.length]!;
      const answer = await this.app.context.operations.claim(this.principal, key, ClaimPaths.bodyFor(key));
      if (answer.outcome !== 'replayed' || answer.response?.status !== 201) throw new Error(`replay of ${key}: ${answer.outcome}`);
    });
  }

  private each(count: number, run: (i: number) => Promise<void>): Promise<void> {
    return inTurns(count, this.inFlight, run);
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

/**
 * CPU nanoseconds this process's threads have run, all of them and the main thread (Linux's
 * per-thread schedstat: nanoseconds, where /proc's stat counts 10-ms ticks); null without /proc.
 * A thread that exits in between takes its time with it: V8's helper threads live as long as the
 * process.
 */
function threadCpuNs(): { all: number; main: number } | null {
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  let all = 0;
  let main: number | null = null;
  for (const tid of tids) {
    try {
      const ran = Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      all += ran;
      if (tid === String(process.pid)) main = ran;
    } catch {
      // exited since the directory was read
    }
  }
  return main === null ? null : { all, main };
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

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      postgres: { type: 'boolean', default: false }, claims: { type: 'string' }, warm: { type: 'string' }, 'in-flight': { type: 'string' },
      only: { type: 'string', multiple: true }, profile: { type: 'string' }, 'lean-parts': { type: 'boolean', default: false },
    },
  });
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  process.stdout.write(JSON.stringify(await benchClaimPath({
    postgres: values.postgres, claims: number(values.claims), warm: number(values.warm), inFlight: number(values['in-flight']),
    only: values.only as PathName[] | undefined, profileDir: values.profile, leanParts: values['lean-parts'],
  })) + '\n');
}
