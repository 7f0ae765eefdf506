/**
 * `gatehouse verify` on a large SQLite ledger: the real binary as a child process, its
 * events/s and peak RSS, and in the same run the ceiling — the rate at which one process does
 * only the SHA-256 work verify must do over the same events (each event hash over its
 * canonical header, the RFC 6962 leaf, the interior nodes of the frontier).
 *
 * Verify checks a large account in slices on worker threads (src/verify/sqlite-slices.ts), so
 * its wall time depends on free cores: on a shared machine compare events per CPU-second too,
 * and the load average recorded with the run. Run directly, the bench also measures the same
 * binary with GATEHOUSE_VERIFY_THREADS=1 (the single-thread path) for comparison.
 *
 * The floor, measured in the same run right after the product: bench/lean-verify.mjs, the least
 * work verify must do over the same file on the same number of threads (see its header), also
 * a child process timed from its start, with its CPU seconds and peak RSS. It must say the
 * fixture is intact, or the bench throws.
 *
 *   npx tsx bench/verify.ts [events]      (default 1,000,000; the fixture is cached in bench/results/)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { hash } from 'node:crypto';
import os from 'node:os';
import BetterSqlite3 from 'better-sqlite3';
import { EVENT_ROW_COLUMNS, type EventHeader } from '../src/core/event-shape.js';
import { canonicalize } from '../src/core/jcs.js';
import type { JsonObject } from '../src/core/json.js';
import { MerkleFrontier, leafHash } from '../src/core/merkle.js';
import { ledgerFixture } from './ledger-fixture.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/gatehouse.js');
const FLOOR = path.join(ROOT, 'bench/lean-verify.mjs');

export interface VerifyBenchResult {
  events: number;
  command: string;
  /** Wall time of the whole child process, start-up included. */
  seconds: number;
  eventsPerSecond: number;
  /** Wall time of the same binary verifying a 1-event ledger: the start-up share of `seconds`. */
  startupSeconds: number;
  peakRssMiB: number;
  /** user + system CPU seconds of the child (from /usr/bin/time; null without it): steadier than wall time on a shared machine. */
  cpuSeconds: number | null;
  /** SHA-256 work only: event hash + leaf + nodes, events/s. */
  ceilingEventsPerSecond: number;
  /** The same plus each payload's SHA-256 (verify checks payload_hash too). */
  ceilingWithPayloadsEventsPerSecond: number;
  fractionOfCeiling: number;
  /** events / cpuSeconds: all threads' CPU time, start-up included. */
  eventsPerCpuSecond: number | null;
  /** GATEHOUSE_VERIFY_THREADS for this run (default: min(cores, 4) worker threads). */
  threads: string;
  loadAverage: { start: number; end: number };
  exitCode: number | null;
  /** bench/lean-verify.mjs on the same fixture, same run: the floor of this design here. */
  floor: { seconds: number; eventsPerSecond: number; cpuSeconds: number | null; eventsPerCpuSecond: number | null; peakRssMiB: number; productFractionOfFloor: number };
  /** The same with GATEHOUSE_VERIFY_THREADS=1, when asked for. */
  singleThread?: { seconds: number; eventsPerSecond: number; cpuSeconds: number | null; eventsPerCpuSecond: number | null; peakRssMiB: number; fractionOfCeiling: number };
}

interface ChildRun {
  seconds: number;
  peakRssKiB: number;
  cpuSeconds: number | null;
  code: number | null;
  stdout: string;
}

/** Peak RSS from /usr/bin/time -v when present, else by polling /proc/<pid>/status VmHWM. */
function runMeasured(args: string[], env: NodeJS.ProcessEnv = {}, script = BIN): Promise<ChildRun> {
  const useTime = fs.existsSync('/usr/bin/time');
  const [cmd, argv] = useTime ? ['/usr/bin/time', ['-v', process.execPath, script, ...args]] : [process.execPath, [script, ...args]];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    let polledPeak = 0;
    const poll = useTime ? null : setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) polledPeak = Math.max(polledPeak, Number(m[1]));
      } catch {
        // the process is gone
      }
    }, 20);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (poll) clearInterval(poll);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      const user = /User time \(seconds\): ([\d.]+)/.exec(stderr);
      const sys = /System time \(seconds\): ([\d.]+)/.exec(stderr);
      const cpuSeconds = user && sys ? Number(user[1]) + Number(sys[1]) : null;
      resolve({ seconds, peakRssKiB: m ? Number(m[1]) : polledPeak, cpuSeconds, code, stdout });
    });
  });
}

const COLUMNS = EVENT_ROW_COLUMNS.join(', ');

/**
 * The ceiling: the same events' bytes prepared outside the clock (canonical header bytes,
 * payloads), then only the hashing timed, chunk by chunk so memory stays bounded.
 */
export function hashCeiling(dbFile: string, accountId: string): { withoutPayloads: number; withPayloads: number } {
  const db = new BetterSqlite3(dbFile, { readonly: true });
  const stmt = db.prepare(`SELECT ${COLUMNS} FROM events WHERE account_id = ? ORDER BY seq`);
  const CHUNK = 50_000;
  let headers: Buffer[] = [];
  let payloads: Array<Buffer | null> = [];
  let events = 0;
  let nsCore = 0n;
  let nsPayloads = 0n;
  const frontier = new MerkleFrontier();
  const flush = () => {
    let t0 = process.hrtime.bigint();
    for (const bytes of headers) frontier.append(leafHash(hash('sha256', bytes, 'buffer')));
    nsCore += process.hrtime.bigint() - t0;
    t0 = process.hrtime.bigint();
    for (const p of payloads) if (p !== null) hash('sha256', p, 'hex');
    nsPayloads += process.hrtime.bigint() - t0;
    events += headers.length;
    headers = [];
    payloads = [];
  };
  for (const row of stmt.iterate(accountId) as Iterable<EventHeader & { hash: string; payload: Buffer | null }>) {
    const { hash: _stored, payload, ...header } = row;
    headers.push(Buffer.from('gatehouse:event:v1\n' + canonicalize(header as unknown as JsonObject), 'utf8'));
    payloads.push(payload);
    if (headers.length === CHUNK) flush();
  }
  flush();
  db.close();
  return {
    withoutPayloads: events / (Number(nsCore) / 1e9),
    withPayloads: events / (Number(nsCore + nsPayloads) / 1e9),
  };
}

export async function benchVerify(options: { events?: number; compareSingleThread?: boolean } = {}): Promise<VerifyBenchResult> {
  const events = options.events ?? 1_000_000;
  const loadStart = os.loadavg()[0]!;
  const fixture = await ledgerFixture(events);
  const tiny = await ledgerFixture(1);
  const args = (f: typeof fixture) => ['verify', '--db', f.dbFile, '--data-dir', f.dataDir, '--json'];
  await runMeasured(args(tiny)); // warm the file cache and the tsx cache
  const startup = await runMeasured(args(tiny));
  const run = await runMeasured(args(fixture));
  const floor = await runMeasured([fixture.dbFile, fixture.dataDir], {}, FLOOR);
  if (floor.code !== 0 || !/"ok":true/.test(floor.stdout)) throw new Error(`the floor did not verify the fixture: ${floor.stdout}`);
  const single = options.compareSingleThread ? await runMeasured(args(fixture), { GATEHOUSE_VERIFY_THREADS: '1' }) : null;
  const ceiling = hashCeiling(fixture.dbFile, fixture.accountId);
  const eventsPerSecond = events / run.seconds;
  const perCpu = (r: ChildRun) => (r.cpuSeconds === null ? null : events / r.cpuSeconds);
  /** A run's rates, as the floor and the single-thread run report them. */
  const rates = (r: ChildRun) => ({ seconds: r.seconds, eventsPerSecond: events / r.seconds, cpuSeconds: r.cpuSeconds, eventsPerCpuSecond: perCpu(r), peakRssMiB: r.peakRssKiB / 1024 });
  return {
    events,
    command: `gatehouse ${args(fixture).join(' ')}`,
    seconds: run.seconds,
    eventsPerSecond,
    startupSeconds: startup.seconds,
    peakRssMiB: run.peakRssKiB / 1024,
    cpuSeconds: run.cpuSeconds,
    ceilingEventsPerSecond: ceiling.withoutPayloads,
    ceilingWithPayloadsEventsPerSecond: ceiling.withPayloads,
    fractionOfCeiling: eventsPerSecond / ceiling.withoutPayloads,
    eventsPerCpuSecond: perCpu(run),
    threads: process.env.GATEHOUSE_VERIFY_THREADS ?? 'default',
    loadAverage: { start: loadStart, end: os.loadavg()[0]! },
    exitCode: run.code,
    floor: { ...rates(floor), productFractionOfFloor: floor.seconds / run.seconds },
    ...(single === null ? {} : {
      singleThread: { ...rates(single), fractionOfCeiling: events / single.seconds / ceiling.withoutPayloads },
    }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchVerify({ events: process.argv[2] ? Number(process.argv[2]) : undefined, compareSingleThread: true });
  console.log(JSON.stringify(result, null, 2));
}
