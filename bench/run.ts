// `npm run bench`: the one entry point. Runs every benchmark module present in bench/, writes
// bench/results/latest.json and prints a markdown table with the machine and the date.
//
//   npm run bench               the full run (about 5 minutes on 2 cores; under 10)
//   npm run bench -- --quick    a smoke run of about a minute (1-s slices, one round, small fixtures)
//   npm run bench -- --only http-claims --profile     (also --only proxy: the proxy's profile)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { benchHttpClaims, CYCLES_TARGET, gatewayKeys, withGatehouse, type HttpClaimsResult, type Rate } from './http-claims.js';
import { claimPathInChild } from './claim-path-child.js';
import { proxyMarkdown, type ProxyBenchResult } from './proxy.js';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, profile: { type: 'boolean', default: false }, only: { type: 'string', multiple: true } } });
const quick = values.quick;
// The smoke run checks that every bench runs and prints; its numbers are rough, so it is kept near a minute.
const seconds = quick ? 1 : 10;
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
/** Claims after which claim-path's `warmed` measurement starts: V8 has all but compiled the claim path by then. */
const WARMED_CLAIMS = 20_000;

type Runner = (mod: Record<string, unknown>) => Promise<unknown>;

/** Known modules with their calling convention; any other `bench*` export is called with `{ quick, seconds }`. */
const MODULES: Array<{ name: string; run?: Runner }> = [
  { name: 'http-claims', run: async () => benchHttpClaims({ seconds, rounds: quick ? 1 : undefined, profile: values.profile, log }) },
  {
    name: 'client-overhead',
    run: async (mod) => withGatehouse({ kind: 'sqlite' }, 1, false, [], async ([server]) => {
      const [gatewayKey] = await gatewayKeys(server!, 1);
      const fn = mod.benchClientOverhead as (o: { baseUrl: string; gatewayKey: string; durationSeconds: number }) => Promise<unknown>;
      return fn({ baseUrl: server!.url, gatewayKey: gatewayKey!, durationSeconds: seconds });
    }),
  },
  {
    name: 'proxy',
    run: async (mod) => (mod.benchProxy as (o: { seconds: number; profile?: boolean; log: typeof log }) => Promise<unknown>)({ seconds, profile: values.profile, log }),
  },
  { name: 'append' },
  // Inclusion and consistency proofs on a 1,000,000-event account (100,000 in the smoke run), and claims with a dead witness.
  { name: 'proofs' },
  {
    name: 'claim-path',
    // A child running tsc's JavaScript, as the service runs (compiled.ts), with the service's Node flags.
    // After the default 500 claims of warm-up V8 is still compiling the product's claim path (its
    // helper threads' share shows it); `warmed` measures claims and the lean claim again in a fresh
    // child after 20,000 of each, by when it has all but finished (BENCHMARKS.md, thirty-fifth session).
    run: async () => quick
      ? claimPathInChild(['--claims', '2000'])
      : { ...claimPathInChild([]), warmed: claimPathInChild(['--only', 'claims', '--only', 'lean', '--warm', String(WARMED_CLAIMS)]) },
  },
  {
    name: 'verify',
    // A tenth of the events in the smoke run (the fixture is cached per size in bench/results/).
    run: async (mod) => (mod.benchVerify as (o: { events?: number }) => Promise<unknown>)(quick ? { events: 100_000 } : {}),
  },
  {
    name: 'review',
    // Incident review on an account of 1,000,000 operations (20,000 in the smoke run), SQLite and PostgreSQL.
    run: async (mod) => (mod.benchReview as (o: { operations?: number; requests?: number; log?: (line: string) => void }) => Promise<unknown>)(
      quick ? { operations: 20_000, requests: 20, log } : { log },
    ),
  },
];

async function runGeneric(mod: Record<string, unknown>): Promise<unknown> {
  const fns = Object.entries(mod).filter(([name, value]) => /^bench/.test(name) && typeof value === 'function');
  if (fns.length === 0) throw new Error('exports no bench* function');
  const out: Record<string, unknown> = {};
  for (const [name, fn] of fns) out[name] = await (fn as (o: object) => Promise<unknown>)({ quick, seconds, durationSeconds: seconds });
  return fns.length === 1 ? out[fns[0]![0]] : out;
}

const startedAt = new Date();
// Other work on the machine skews every number: recorded, and warned about.
const loadAtStart = os.loadavg()[0]!;
if (loadAtStart > os.availableParallelism()) log(`WARNING: load average ${loadAtStart.toFixed(1)} on ${os.availableParallelism()} cores: the numbers will be low and noisy`);
const results: Record<string, unknown> = {};
let failed = false;
for (const { name, run } of MODULES) {
  if (values.only && !values.only.includes(name)) continue;
  const file = path.join(BENCH, `${name}.ts`);
  if (!fs.existsSync(file)) {
    log(`${name}: not present, skipped`);
    continue;
  }
  log(`${name}: running`);
  const began = performance.now();
  try {
    const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    results[name] = await (run ?? runGeneric)(mod);
  } catch (error) {
    failed = true;
    results[name] = { error: (error as Error).message };
    log(`${name}: FAILED: ${(error as Error).stack ?? error}`);
  }
  log(`${name}: ${((performance.now() - began) / 1000).toFixed(0)} s`);
}

const machine = {
  nproc: os.availableParallelism(),
  cpu: os.cpus()[0]?.model ?? 'unknown',
  memory_gib: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
  load_average_at_start: Math.round(loadAtStart * 10) / 10,
  load_average_at_end: Math.round(os.loadavg()[0]! * 10) / 10,
};
const report = { date: startedAt.toISOString(), quick, seconds_per_measurement: seconds, machine, results, took_seconds: Math.round((Date.now() - startedAt.getTime()) / 1000) };
fs.mkdirSync(path.join(BENCH, 'results'), { recursive: true });
fs.writeFileSync(path.join(BENCH, 'results/latest.json'), JSON.stringify(report, null, 2) + '\n');
process.stdout.write(markdown(report) + '\n');
if (failed) process.exitCode = 1;

function markdown(r: typeof report): string {
  const lines = [
    `## Benchmarks — ${r.date}${r.quick ? ' (quick smoke run: numbers are rough)' : ''}`,
    '',
    `Machine: ${r.machine.nproc} cores (${r.machine.cpu}), ${r.machine.memory_gib} GiB, Node ${r.machine.node}, ${r.machine.platform}, load average ${r.machine.load_average_at_start} at the start and ${r.machine.load_average_at_end} at the end. ${r.seconds_per_measurement} s per measurement; the whole run took ${r.took_seconds} s.`,
    '',
  ];
  const http = r.results['http-claims'] as HttpClaimsResult | { error: string } | undefined;
  if (http && !('error' in http)) lines.push(...httpTable(http), '');
  const proxy = r.results.proxy as ProxyBenchResult | { error: string } | undefined;
  if (proxy && !('error' in proxy)) lines.push(...proxyMarkdown(proxy), '');
  for (const [name, value] of Object.entries(r.results)) {
    if ((name === 'http-claims' || name === 'proxy') && !(value as { error?: string }).error) continue;
    lines.push(`### ${name}`, '', '| metric | value |', '|---|---|');
    for (const [key, leaf] of flatten(value)) lines.push(`| ${key} | ${leaf} |`);
    lines.push('');
  }
  return lines.join('\n');
}

function httpTable(h: HttpClaimsResult): string[] {
  const koa = h.bare_koa.rps;
  const durable = h.durable_koa.rps;
  const lean = h.lean_claim.rps;
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const row = (what: string, rate: Rate, target = '') =>
    `| ${what} | ${rate.rps} | ${rate.p50_ms} | ${rate.p99_ms} | ${rate.max_ms} | ${rate.max_steady_ms} | ${pct(rate.rps / koa)} | ${pct(rate.rps / durable)} | ${pct(rate.rps / lean)} | ${target} | ${rate.non2xx + rate.errors} |`;
  const t = h.ratios.targets_met;
  const lines = [
    `### HTTP on loopback, autocannon, ${h.connections} connections, ${h.rounds} interleaved rounds`,
    '',
    'Ceilings from the same run: bare Koa does no I/O; durable Koa does one group-committed, synchronous=FULL SQLite insert per request; the lean claim does a new-key claim\'s durable work (fingerprint, sealed and hash-chained event, Merkle frontier, operation row, head update, group commit) on raw prepared statements behind the same Koa; the lean replay, a replay\'s (of lean claim: against the lean claim for every row).',
    '',
    '| what | req/s | p50 ms | p99 ms | max ms | max after 1st s | of bare Koa | of durable Koa | of lean claim | target | non-2xx + errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    row('bare Koa answering `{}`', h.bare_koa),
    row('durable Koa: one durable SQLite write, then `{}`', h.durable_koa),
    row('lean claim: a claim\'s durable work, no framework, on the accounts the product\'s load uses', h.lean_claim),
    row('lean claim, every claim in one account (less durable work: for comparison)', h.lean_claim_one_account),
    row('SQLite: new-key claims', h.sqlite.new_key_claims, `≥ 35 % of durable: ${met(t.new_key)}; p99 ≤ 25 ms: ${met(t.new_key_p99)}; max ≤ 250 ms: ${met(t.new_key_max)}; ≥ 75 % of lean: ${met(t.vs_lean)}`),
    row('lean replay: a replay\'s durable work (the row read by its key, the `replayed` event chained, the response opened), no framework', h.lean_replay),
    row('SQLite: replays of a terminal operation', h.sqlite.replays, `≥ 50 % of durable: ${met(t.replay)}; ${pct(h.ratios.replay_vs_lean_replay)} of the lean replay`),
    `| lean cycles: claim → sent → completed, each step's durable work (reports: the row by id, the lease checked, the report's digest looked up and stored, the event chained, the row updated), no framework (${h.lean_cycles.workers} workers) | ${h.lean_cycles.per_sec} cycles/s | | | | | | | | | ${h.lean_cycles.failures} |`,
    `| SQLite: claim → sent → completed cycles (${h.sqlite.cycles.workers} workers) | ${h.sqlite.cycles.per_sec} cycles/s | | | | | | | | ≥ ${CYCLES_TARGET}/s: ${met(t.cycles)}; ${pct(h.ratios.cycles_vs_lean_cycles)} of the lean cycle | ${h.sqlite.cycles.failures} |`,
    '',
    `New-key claims of durable Koa, round by round: ${h.sqlite.rounds.map(pct).join(', ')}; p99 round by round (the table shows the worst): ${h.sqlite.p99_rounds.product.join(', ')} ms (lean claim ${h.sqlite.p99_rounds.lean.join(', ')} ms).`,
  ];
  const gc = h.sqlite.group_commit;
  if (gc) lines.push(`Group commit during the measured rounds (from the service's /metrics): ${gc.batches} batches, ${gc.mean_batch_size} units per batch, ${gc.mean_commit_ms} ms per COMMIT.`);
  if ('one_instance' in h.postgres) {
    lines.push(row('PostgreSQL, one instance: new-key claims', h.postgres.one_instance));
    lines.push(row('PostgreSQL, two instances, any account on either: new-key claims', h.postgres.two_instances, `≥ one instance: ${(h.ratios.pg_two_vs_one ?? 0) >= 1 ? 'met' : 'NOT met'} (×${h.ratios.pg_two_vs_one})`));
    lines.push(row('PostgreSQL, two instances, each account on one: new-key claims', h.postgres.two_instances_by_account, `≥ one instance: ${(h.ratios.pg_two_by_account_vs_one ?? 0) >= 1 ? 'met' : 'NOT met'} (×${h.ratios.pg_two_by_account_vs_one})`));
    const cpu = h.postgres.cpu;
    const describe = (u: typeof cpu.one_instance) => u
      ? `machine ${u.machine_busy_pct} % busy; ${Object.entries(u.by_group_pct).map(([group, share]) => `${group} ${share} %`).join(', ')} (of one core)`
      : 'not measured (no /proc)';
    const pgc = h.postgres.group_commit;
    if (pgc) lines.push('', `PostgreSQL group commit, one instance (its /metrics): ${pgc.batches} batches, ${pgc.mean_batch_size} units per batch, ${pgc.mean_commit_ms} ms per COMMIT.`);
    lines.push('', `CPU during the PostgreSQL slices: one instance: ${describe(cpu.one_instance)}; two instances, any account on either: ${describe(cpu.two_instances)}; two instances, each account on one: ${describe(cpu.two_instances_by_account)}.`);
  } else {
    lines.push(`| PostgreSQL | skipped: ${h.postgres.skipped} | | | | | | |`);
  }
  if (h.profiles.length > 0) lines.push('', `CPU profiles: ${h.profiles.map((p) => path.relative(process.cwd(), p)).join(', ')}`);
  return lines;
}

function pct(x: number): string {
  return `${(x * 100).toFixed(0)} %`;
}

function flatten(value: unknown, prefix = ''): Array<[string, string]> {
  if (value === null || typeof value !== 'object') return [[prefix || 'value', typeof value === 'number' ? String(Math.round(value * 100) / 100) : String(value)]];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
}
