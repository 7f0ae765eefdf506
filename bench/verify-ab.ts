/**
 * Two builds of `gatehouse verify` on the same 1M-event fixture, run alternately (A, B, A, B, …)
 * so a shared machine's load falls on both alike: per run the wall time, the child's CPU
 * seconds (user + system, /usr/bin/time -v), its peak RSS, and the CPU of its main thread and
 * of its busiest other thread (the slice worker) and the rest (polled from /proc/<pid>/task/<tid>/stat, so a thread's last 50 ms may
 * be missed), which shows how evenly the slices are shared.
 *
 *   npx tsx bench/verify-ab.ts --a ../main-copy --b . [--rounds 3] [--events 1000000] [--env K=V …] [--b-env K=V …]
 *
 * --a and --b are checkouts with a built dist/ (bin/gatehouse.js is run from each), or the word
 * `floor`: bench/lean-verify.mjs of this checkout, the least work verify must do (its header).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ledgerFixture } from './ledger-fixture.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    events: { type: 'string', default: '1000000' },
    env: { type: 'string', multiple: true, default: [] },
    'b-env': { type: 'string', multiple: true, default: [] },
  },
});
if (values.a === undefined || values.b === undefined) throw new Error('give --a DIR and --b DIR');
const pairs = (list: string[]) => Object.fromEntries(list.map((kv) => kv.split('=', 2) as [string, string]));
const env = pairs(values.env);
/** Extra environment for B only (a setting A does not have, or a value to try). */
const bEnv = { ...env, ...pairs(values['b-env']) };
const TICK = 100; // USER_HZ on Linux

interface Run {
  seconds: number;
  cpu: number;
  rssMiB: number;
  mainCpu: number;
  /** The busiest other thread: the slice worker. */
  workerCpu: number;
  /** The rest: GC helpers, libuv, V8 platform threads. */
  otherCpu: number;
  /**
   * Seconds the main thread and the worker spent blocked (neither running nor waiting for a
   * core: waiting for the other thread), from /proc/<pid>/task/<tid>/schedstat: lifetime less
   * run time less run-queue wait. On a shared machine the wall time moves with the neighbours;
   * this shows how well the two threads' work is balanced, whatever the load.
   */
  mainBlocked: number;
  workerBlocked: number;
  ok: boolean;
}

interface Sched { run: number; wait: number; startS: number; seenS: number }

/** Seconds since boot (/proc/uptime), the clock of a thread's start time. */
function uptimeSeconds(): number {
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
}

/** Per thread of `pid`: run and run-queue wait (s, schedstat), its start and the time it was last seen (s since boot). */
function threadSched(pid: number, into: Map<number, Sched>): void {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  const now = uptimeSeconds();
  for (const tid of tids) {
    try {
      const [run, wait] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const startS = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / TICK;
      into.set(Number(tid), { run: run! / 1e9, wait: wait! / 1e9, startS, seenS: now });
    } catch {
      // the thread ended
    }
  }
}

/** utime + stime of every thread of `pid`, in ticks, by tid. */
function threadTicks(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), Number(fields[11]) + Number(fields[12]));
    } catch {
      // the thread ended
    }
  }
  return out;
}

const FLOOR = path.resolve(import.meta.dirname, 'lean-verify.mjs');

function runOnce(dir: string, dbFile: string, dataDir: string, childEnv: Record<string, string>): Promise<Run> {
  const argv = dir === 'floor'
    ? [FLOOR, dbFile, dataDir]
    : [path.resolve(dir, 'bin/gatehouse.js'), 'verify', '--db', dbFile, '--data-dir', dataDir, '--json'];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    // node is exec'd by /usr/bin/time: its pid is time's child, found once it exists.
    const child = spawn('/usr/bin/time', ['-v', process.execPath, ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...childEnv },
    });
    let stdout = '';
    let stderr = '';
    const seen = new Map<number, number>();
    const sched = new Map<number, Sched>();
    let nodePid: number | null = null;
    const poll = setInterval(() => {
      if (nodePid === null) {
        try {
          nodePid = Number(fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]) || null;
        } catch {
          return;
        }
      }
      if (nodePid !== null) {
        for (const [tid, ticks] of threadTicks(nodePid)) seen.set(tid, Math.max(seen.get(tid) ?? 0, ticks));
        threadSched(nodePid, sched);
      }
    }, 50);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', () => {
      clearInterval(poll);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const num = (re: RegExp) => Number(re.exec(stderr)?.[1] ?? NaN);
      const mainCpu = nodePid === null ? NaN : (seen.get(nodePid) ?? 0) / TICK;
      // The other threads, busiest first: the busiest is the worker.
      const others = [...seen].filter(([tid]) => tid !== nodePid).sort((a, b) => b[1] - a[1]);
      const workerCpu = (others[0]?.[1] ?? 0) / TICK;
      const workerTid = others[0]?.[0];
      const blocked = (tid: number | null | undefined) => {
        const x = tid === null || tid === undefined ? undefined : sched.get(tid);
        return x === undefined ? NaN : Math.max(0, x.seenS - x.startS - x.run - x.wait);
      };
      const otherCpu = others.slice(1).reduce((sum, [, ticks]) => sum + ticks / TICK, 0);
      resolve({
        seconds,
        cpu: num(/User time \(seconds\): ([\d.]+)/) + num(/System time \(seconds\): ([\d.]+)/),
        rssMiB: num(/Maximum resident set size \(kbytes\): (\d+)/) / 1024,
        mainCpu,
        workerCpu,
        otherCpu,
        mainBlocked: blocked(nodePid),
        workerBlocked: blocked(workerTid),
        ok: /"ok":true/.test(stdout),
      });
    });
  });
}

const fixture = await ledgerFixture(Number(values.events));
const rounds = Number(values.rounds);
const rows: string[] = ['| round | build | wall s | CPU s | main thread CPU s | busiest other thread CPU s | the rest CPU s | main / worker blocked s | peak RSS MiB | load | ok |', '|---|---|---|---|---|---|---|---|---|---|---|'];
const totals = { A: [] as Run[], B: [] as Run[] };
await runOnce(values.b, fixture.dbFile, fixture.dataDir, bEnv); // warm the page cache
for (let r = 1; r <= rounds; r++) {
  for (const [name, dir] of [['A', values.a], ['B', values.b]] as const) {
    const run = await runOnce(dir, fixture.dbFile, fixture.dataDir, name === 'A' ? env : bEnv);
    totals[name].push(run);
    rows.push(`| ${r} | ${name} | ${run.seconds.toFixed(2)} | ${run.cpu.toFixed(2)} | ${run.mainCpu.toFixed(2)} | ${run.workerCpu.toFixed(2)} | ${run.otherCpu.toFixed(2)} | ${run.mainBlocked.toFixed(2)} / ${run.workerBlocked.toFixed(2)} | ${run.rssMiB.toFixed(0)} | ${os.loadavg()[0]!.toFixed(1)} | ${run.ok} |`);
    console.error(rows[rows.length - 1]);
  }
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
console.log(rows.join('\n'));
for (const name of ['A', 'B'] as const) {
  const runs = totals[name];
  console.log(`${name}: CPU s mean ${mean(runs.map((x) => x.cpu)).toFixed(2)}, wall s mean ${mean(runs.map((x) => x.seconds)).toFixed(2)}, ` +
    `events per CPU-s ${(Number(values.events) / mean(runs.map((x) => x.cpu))).toFixed(0)}, peak RSS max ${Math.max(...runs.map((x) => x.rssMiB)).toFixed(0)} MiB; ` +
    `medians: CPU s ${median(runs.map((x) => x.cpu)).toFixed(2)}, wall s ${median(runs.map((x) => x.seconds)).toFixed(2)}, ` +
    `events/s ${(Number(values.events) / median(runs.map((x) => x.seconds))).toFixed(0)}, main / worker CPU s ` +
    `${median(runs.map((x) => x.mainCpu)).toFixed(2)} / ${median(runs.map((x) => x.workerCpu)).toFixed(2)}, main + worker blocked s ` +
    `${median(runs.map((x) => x.mainBlocked + x.workerBlocked)).toFixed(2)}`);
}
