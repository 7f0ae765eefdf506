// Where the CPU went during a measurement, read from Linux's /proc (null elsewhere): the
// machine's busy share, and the CPU of named process groups, in % of one core. On a 2-core
// machine that runs the servers, PostgreSQL and the load generator at once, this is what
// says whether a set-up was bound by its own work or by the machine. PostgreSQL is not a
// group: its backends come and go with the pools' idle connections, and a process that
// exited between two samples takes its CPU with it; it is in `other` (busy minus the groups).
import fs from 'node:fs';
import os from 'node:os';

export interface CpuSnapshot {
  at: number;
  /** Busy and total jiffies over all cores (/proc/stat's first line). */
  busy: number;
  total: number;
  /** utime + stime jiffies per group. */
  groups: Record<string, number>;
}

export interface CpuUsage {
  /** Share of the whole machine that was busy, in % (100 = every core). */
  machine_busy_pct: number;
  /** Per group, and `other` (everything else that was busy: PostgreSQL, the kernel), in % of one core. */
  by_group_pct: Record<string, number>;
}

/** Groups of fixed pids (processes that live through the measurement). */
export function sampleCpu(pids: Record<string, number[]>): CpuSnapshot | null {
  if (!fs.existsSync('/proc/stat')) return null;
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + (fields[4] ?? 0);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const groups: Record<string, number> = {};
  for (const [name, list] of Object.entries(pids)) {
    groups[name] = 0;
    for (const pid of list) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        groups[name] += Number(rest[11]) + Number(rest[12]);
      } catch {
        // exited: counts from here on as nothing
      }
    }
  }
  return { at: performance.now(), busy: total - idle, total, groups };
}

export function cpuUsage(before: CpuSnapshot | null, after: CpuSnapshot | null): CpuUsage | null {
  if (!before || !after) return null;
  const seconds = (after.at - before.at) / 1000;
  const ticksPerSecond = 100; // USER_HZ on Linux
  const by_group_pct: Record<string, number> = {};
  for (const name of Object.keys(after.groups)) {
    by_group_pct[name] = Math.round(((after.groups[name]! - (before.groups[name] ?? 0)) / ticksPerSecond / seconds) * 100);
  }
  const machineBusy = (after.busy - before.busy) / (after.total - before.total);
  const cores = os.availableParallelism();
  const named = Object.values(by_group_pct).reduce((a, b) => a + b, 0);
  by_group_pct.other = Math.max(0, Math.round(machineBusy * cores * 100 - named));
  return { machine_busy_pct: Math.round(machineBusy * 100), by_group_pct };
}

/**
 * Runs `load` against the server `pid` and answers, with the load's own result, the CPU the
 * server spent (from /proc, in USER_HZ ticks of 10 ms) and this process (the load generator)
 * spent per answer, the answers being `perSecond(result)` times the load's duration. On a shared
 * 2-core machine the rate moves with the neighbours; the CPU an answer costs much less.
 */
export async function cpuPerAnswer<T>(pid: number, load: () => Promise<T>, perSecond: (result: T) => number): Promise<{ result: T; server_cpu_us: number; client_cpu_us: number }> {
  const before = sampleCpu({ server: [pid] })!;
  const client = process.cpuUsage();
  const began = performance.now();
  const result = await load();
  const clientUs = process.cpuUsage(client);
  const after = sampleCpu({ server: [pid] })!;
  const answers = (perSecond(result) * (performance.now() - began)) / 1000;
  return {
    result,
    server_cpu_us: Math.round(((after.groups.server! - before.groups.server!) * 10_000) / answers),
    client_cpu_us: Math.round((clientUs.user + clientUs.system) / answers),
  };
}
