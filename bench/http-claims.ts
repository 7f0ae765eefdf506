// HTTP load on loopback (docs/retry-contract.md, issues 3 and 4): autocannon with 50 connections against
// (a) two ceilings: a bare Koa server answering `{}` (bench/bare-koa.ts; the targets are set
// against it) and one doing a single durable SQLite write per request (bench/durable-koa.ts; fairer:
// a claim's durability, nothing else), and `gatehouse serve` on
// (b) a SQLite file with durable group commits: new-key claims, replays, claim → sent → completed cycles;
// (c) PostgreSQL with one and with two instances (the connections split between both): new-key claims.
// Every server is a child process, so the numbers are comparable.
//
//   node --import=tsx bench/http-claims.ts [--seconds 10] [--connections 50] [--profile]
import crypto from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { compiledScript } from './compiled.js';
import { cpuUsage, sampleCpu, type CpuUsage } from './cpu-usage.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin/gatehouse.js');
/** Claims rotate over this many accounts, so PostgreSQL's per-account chain-head lock is not the only thing measured. */
const ACCOUNTS = 4;
/**
 * PostgreSQL one vs two instances: alternating slices AB, BA, AB, BA, so machine noise hits both
 * alike; fewer when a measurement is shorter than 4 s (a slice is at least 1 s).
 */
const PG_ROUNDS = 4;
/** Issue 11: claim → sent → completed cycles at three times the 690/s measured when it was filed (an absolute rate, not a ratio). */
export const CYCLES_TARGET = 3 * 690;
/** SQLite: the ceilings, the lean claim and the product, each measured once per round. */
const ROUNDS = 3;

export interface Rate {
  /** Successful (2xx) answers per second. */
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** The slowest single answer. */
  max_ms: number;
  /**
   * The slowest answer after the run's first second. The first second's slowest answers are the
   * load generator's 50 connections opening at once (bench/stall.ts: the service's own latency
   * histogram has no claim over 100 ms in runs where this client saw 400+ ms then, and with the
   * connections opened before the load starts the slowest answer is under 100 ms).
   */
  max_steady_ms: number;
  /** Answers that were not 2xx, and connection errors: both must be 0 for the rate to count. */
  non2xx: number;
  errors: number;
}

export interface HttpClaimsResult {
  connections: number;
  seconds: number;
  bare_koa: Rate;
  /** One group-committed, synchronous=FULL SQLite insert per request, new key each time: the durable ceiling. */
  durable_koa: Rate;
  /** The same durable work as a new-key claim on raw prepared statements behind the same Koa: the design's floor (bench/lean-claim.ts). */
  lean_claim: Rate;
  /** The lean claim with every claim in one account (before the seventh session, the floor reported): less durable work than the product's load, for comparison. */
  lean_claim_one_account: Rate;
  /** A replay's durable work on raw prepared statements behind the same Koa: the floor of the replay (bench/lean-claims.ts). */
  lean_replay: Rate;
  /** A claim → sent → completed cycle's durable work on raw prepared statements behind the same Koa: the floor of a cycle (bench/lean-claims.ts). */
  lean_cycles: CycleRate;
  rounds: number;
  sqlite: {
    new_key_claims: Rate; replays: Rate; cycles: CycleRate;
    /** Read from the service's /metrics over the measured rounds. */
    group_commit: GroupCommitStats | null;
    /** New-key claims as a share of durable Koa in each round. */
    rounds: number[];
    /** p99 (ms) of new-key claims and of the lean claim in each round: the table shows the worst round's. */
    p99_rounds: { product: number[]; lean: number[] };
  };
  postgres: {
    one_instance: Rate; two_instances: Rate; two_instances_by_account: Rate;
    /** The one instance's group commit (PostgreSQL batches per account), from its /metrics over the measured slices. */
    group_commit: GroupCommitStats | null;
    cpu: { one_instance: CpuUsage | null; two_instances: CpuUsage | null; two_instances_by_account: CpuUsage | null };
  } | { skipped: string };
  ratios: {
    new_key_vs_koa: number;
    replay_vs_koa: number;
    /** The same rates against the durable ceiling (no targets: for reporting). */
    new_key_vs_durable: number;
    replay_vs_durable: number;
    new_key_vs_lean: number;
    lean_vs_durable: number;
    replay_vs_lean_replay: number;
    lean_replay_vs_durable: number;
    cycles_vs_lean_cycles: number;
    /** Targets against the same run's ceilings: new-key ≥ 35 % of durable Koa, p99 ≤ 25 ms, max ≤ 250 ms; replays ≥ 50 %; ≥ 75 % of the lean claim; cycles ≥ CYCLES_TARGET. */
    targets_met: { new_key: boolean; new_key_p99: boolean; new_key_max: boolean; replay: boolean; vs_lean: boolean; cycles: boolean };
    pg_two_vs_one: number | null;
    pg_two_by_account_vs_one: number | null;
  };
  profiles: string[];
}

export interface HttpClaimsOptions {
  seconds: number;
  /** Interleaved rounds of the SQLite measurements (3; the smoke run takes 1). */
  rounds?: number;
  connections?: number;
  /** A PostgreSQL URL allowed to CREATE DATABASE; null skips part (c). */
  postgresAdminUrl?: string | null;
  /** Runs each gatehouse server under `node --cpu-prof`; the profiles land in bench/results/profiles. */
  profile?: boolean;
  log?: (line: string) => void;
}

export async function benchHttpClaims(options: HttpClaimsOptions): Promise<HttpClaimsResult> {
  const connections = options.connections ?? 50;
  const seconds = options.seconds;
  const rounds = options.rounds ?? ROUNDS;
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));
  const profiles: string[] = [];
  const adminUrl = options.postgresAdminUrl === undefined ? defaultPostgresAdminUrl() : options.postgresAdminUrl;

  // The ceilings, the lean claim and the product run side by side (idle servers cost nothing) and
  // are measured in interleaved rounds, the order turned each round, so that whatever else the
  // machine is doing hits every one of them alike; the rates are the rounds' mean.
  log(`starting bare koa, durable koa, the lean claim and gatehouse serve (SQLite)`);
  const koa = await startChild('bare koa', [compiledScript('bench/bare-koa.ts')], /listening on (http:\/\/\S+)/);
  const durable = await startChild('durable koa', [compiledScript('bench/durable-koa.ts')], /listening on (http:\/\/\S+)/);
  const lean = await startChild('lean claim', [compiledScript('bench/lean-claim.ts')], /listening on (http:\/\/\S+)/);
  let bareKoa: Rate;
  let durableKoa: Rate;
  let leanClaim: Rate;
  let leanOneAccount: Rate;
  let leanReplay: Rate;
  let leanCycles: CycleRate;
  let sqlite: HttpClaimsResult['sqlite'];
  try {
    ({ bareKoa, durableKoa, leanClaim, leanOneAccount, leanReplay, leanCycles, sqlite } = await withGatehouse({ kind: 'sqlite' }, 1, options.profile, profiles, async ([server]) => {
      const keys = await gatewayKeys(server!);
      const replay = await replayTarget(server!, keys[0]!);
      const leanReplayLoad = await leanReplayTarget(lean.url);
      const subjects: Array<{ name: string; measure: (seconds: number) => Promise<Rate> }> = [
        { name: 'bare koa', measure: (s) => load({ url: koa.url, connections, seconds: s, method: 'GET', path: '/' }) },
        { name: 'durable koa', measure: (s) => durableLoad(durable.url, connections, s) },
        { name: 'lean claim', measure: (s) => leanLoad(lean.url, connections, s) },
        { name: 'lean claim, one account', measure: (s) => leanLoad(lean.url, connections, s, { oneAccount: true }) },
        { name: 'gatehouse new-key claims', measure: (s) => newKeyLoad([server!], keys, connections, s) },
        { name: 'gatehouse replays', measure: (s) => load({ ...replay, url: server!.url, connections, seconds: s }) },
        { name: 'lean replay', measure: (s) => load({ ...leanReplayLoad, url: lean.url, connections, seconds: s }) },
      ];
      for (const subject of subjects) await subject.measure(warmup(seconds));
      const before = await scrapeMetrics(server!);
      const slices: Rate[][] = subjects.map(() => []);
      for (let round = 0; round < rounds; round++) {
        const order = subjects.map((_, i) => (i + round) % subjects.length);
        for (const i of order) {
          log(`${subjects[i]!.name}: ${seconds} s at ${connections} connections (round ${round + 1} of ${rounds})`);
          slices[i]!.push(await subjects[i]!.measure(seconds));
        }
      }
      const group_commit = commitStats(before, await scrapeMetrics(server!));
      // Cycles, the product's and the lean server's, in alternating slices (A B B A) so that the
      // host's load hits both alike; each half as long, so the four take what the product's one did.
      const halves = { product: [] as CycleRate[], lean: [] as CycleRate[] };
      for (const which of ['product', 'lean', 'lean', 'product'] as const) {
        log(`sqlite: claim → sent → completed cycles, ${which === 'product' ? 'gatehouse' : 'lean'} (${seconds / 2} s)`);
        halves[which].push(which === 'product' ? await cycleLoad(server!, keys, connections, seconds / 2) : await leanCycleLoad(lean.url, connections, seconds / 2));
      }
      const [bare, durableRate, leanRate, leanOne, newKey, replays, leanReplayRate] = slices.map(average) as [Rate, Rate, Rate, Rate, Rate, Rate, Rate];
      return {
        bareKoa: bare, durableKoa: durableRate, leanClaim: leanRate, leanOneAccount: leanOne, leanReplay: leanReplayRate, leanCycles: averageCycles(halves.lean),
        sqlite: { new_key_claims: newKey, replays, cycles: averageCycles(halves.product), group_commit, rounds: slices[4]!.map((r, i) => round(r.rps / slices[1]![i]!.rps, 3)),
          p99_rounds: { product: slices[4]!.map((r) => r.p99_ms), lean: slices[2]!.map((r) => r.p99_ms) },
        },
      };
    }));
  } finally {
    await Promise.all([koa.stop(), durable.stop(), lean.stop()]);
  }

  let postgres: HttpClaimsResult['postgres'] = { skipped: 'no PostgreSQL' };
  if (adminUrl && (await reachable(adminUrl))) {
    // The set-ups run side by side (idle servers cost nothing) and are measured in alternating
    // slices, so whatever else the machine is doing hits each of them alike. Two instances are
    // measured twice: with every instance taking every account (a plain round-robin balancer,
    // the worst case for the accounts' chain-head locks) and with each account's traffic on one
    // instance (a balancer routing by API key), where each instance's remembered heads hit.
    postgres = await benchPostgresInstances(adminUrl, connections, seconds, options.profile, profiles, log);
  } else {
    log(`postgres: SKIPPED (${adminUrl ?? 'no URL'} does not answer)`);
  }

  const newKeyRatio = sqlite.new_key_claims.rps / bareKoa.rps;
  const replayRatio = sqlite.replays.rps / bareKoa.rps;
  return {
    connections, seconds, rounds, bare_koa: bareKoa, durable_koa: durableKoa, lean_claim: leanClaim, lean_claim_one_account: leanOneAccount, lean_replay: leanReplay, lean_cycles: leanCycles, sqlite, postgres,
    ratios: {
      new_key_vs_koa: round(newKeyRatio, 3),
      replay_vs_koa: round(replayRatio, 3),
      new_key_vs_durable: round(sqlite.new_key_claims.rps / durableKoa.rps, 3),
      replay_vs_durable: round(sqlite.replays.rps / durableKoa.rps, 3),
      new_key_vs_lean: round(sqlite.new_key_claims.rps / leanClaim.rps, 3),
      lean_vs_durable: round(leanClaim.rps / durableKoa.rps, 3),
      replay_vs_lean_replay: round(sqlite.replays.rps / leanReplay.rps, 3),
      lean_replay_vs_durable: round(leanReplay.rps / durableKoa.rps, 3),
      cycles_vs_lean_cycles: round(sqlite.cycles.per_sec / leanCycles.per_sec, 3),
      targets_met: {
        new_key: sqlite.new_key_claims.rps / durableKoa.rps >= 0.35,
        new_key_p99: sqlite.new_key_claims.p99_ms <= 25,
        new_key_max: sqlite.new_key_claims.max_ms <= 250,
        replay: sqlite.replays.rps / durableKoa.rps >= 0.5,
        vs_lean: sqlite.new_key_claims.rps / leanClaim.rps >= 0.75,
        cycles: sqlite.cycles.per_sec >= CYCLES_TARGET,
      },
      pg_two_vs_one: 'one_instance' in postgres ? round(postgres.two_instances.rps / postgres.one_instance.rps, 3) : null,
      pg_two_by_account_vs_one: 'one_instance' in postgres ? round(postgres.two_instances_by_account.rps / postgres.one_instance.rps, 3) : null,
    },
    profiles,
  };
}

function warmup(seconds: number): number {
  return Math.max(1, Math.round(seconds / 5));
}

export function defaultPostgresAdminUrl(): string {
  return process.env.GATEHOUSE_BENCH_DATABASE_URL ?? process.env.GATEHOUSE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
}

/** The intended write of the bench's claims: the n-th has its own command, so its own fingerprint. */
const claimIntent = (n: number) => ({ method: 'POST', route: '/v1/tickets', command: { title: 'bench ticket', amount_minor: 1000 + n, currency: 'EUR' } });

export const CLAIM_BODY = (n: number) => JSON.stringify(claimIntent(n));

/**
 * The body of a new-key claim in a claim load: CLAIM_BODY with a lease that outlives the run. The
 * load never reports, so with the default 60-s lease every claim of a round comes back a minute
 * later as work for the lease sweeper (a transition and a `lease_expired` event each, about a
 * claim's cost), inside whatever round is then being measured: the product's later rounds then
 * measured claims plus the sweeping of earlier ones (p99 18 / 31 / 33 ms round by round), which
 * the lean claim, with no sweeper, never does. A gateway reports within its lease; lease expiry
 * is measured on its own (BENCHMARKS.md, twenty-fourth session).
 */
export const NEW_KEY_CLAIM_BODY = (n: number) => JSON.stringify({ ...claimIntent(n), lease_seconds: 3600 });

/** How requests meet instances: any account on any instance, or each account's on one instance. */
type Routing = 'any' | 'by-account';

/** New Idempotency-Key on every request, accounts in rotation; connections split evenly over the servers. */
export async function newKeyLoad(
  servers: BenchServer[], keys: string[], connections: number, seconds: number, routing: Routing = 'any', onAnswer?: (ms: number) => void,
): Promise<Rate> {
  const run = crypto.randomBytes(4).toString('hex');
  let n = 0;
  const per = splitConnections(connections, servers.length);
  const results = await Promise.all(servers.map((server, s) => {
    const own = routing === 'any' ? keys : keys.filter((_, k) => k % servers.length === s);
    return load({
      url: server.url, connections: per[s]!, seconds, method: 'POST', path: '/v1/operations',
      headers: { 'content-type': 'application/json' },
      body: NEW_KEY_CLAIM_BODY(0),
      setupRequest: (req) => {
        const i = n++;
        req.headers = { ...req.headers, authorization: `Bearer ${own[i % own.length]}`, 'idempotency-key': `bench-${run}-${s}-${i}` };
        // A new key names a new intended write: its own command, so its own fingerprint (one
        // command for all would make every claim a possible duplicate for the review's trigger).
        req.body = NEW_KEY_CLAIM_BODY(i);
        return req;
      },
      onAnswer,
    });
  }));
  return combine(results);
}

/** The durable ceiling (path /): the claim bodies newKeyLoad sends, a new Idempotency-Key on every request. */
export function durableLoad(url: string, connections: number, seconds: number): Promise<Rate> {
  return claimBodiesLoad(url, connections, seconds, '/', () => ({}));
}

/**
 * The lean claim's load: durableLoad's requests on /v1/operations, each told its account in the
 * same rotation as newKeyLoad's API keys, so that the lean claim writes the same chains and index
 * ranges as the product does under its load; `oneAccount`, every claim in one account (the floor
 * as measured before the seventh session, for comparison).
 */
export function leanLoad(url: string, connections: number, seconds: number, options: { oneAccount?: boolean } = {}): Promise<Rate> {
  return claimBodiesLoad(url, connections, seconds, '/v1/operations', (i) => leanAccount(options.oneAccount ? 0 : i));
}

function claimBodiesLoad(url: string, connections: number, seconds: number, path: string, headersFor: (i: number) => Record<string, string>): Promise<Rate> {
  const run = crypto.randomBytes(4).toString('hex');
  let n = 0;
  return load({
    url, connections, seconds, method: 'POST', path,
    headers: { 'content-type': 'application/json' },
    body: NEW_KEY_CLAIM_BODY(0),
    setupRequest: (req) => {
      const i = n++;
      req.headers = { ...req.headers, 'idempotency-key': `bench-durable-${run}-${i}`, ...headersFor(i) };
      req.body = NEW_KEY_CLAIM_BODY(i);
      return req;
    },
  });
}

/** The same key and body again and again on an operation that is terminal: `replayed`, 200. */
export async function replayTarget(server: BenchServer, key: string): Promise<Omit<LoadOptions, 'url' | 'connections' | 'seconds'>> {
  const idem = `bench-replay-${crypto.randomBytes(4).toString('hex')}`;
  const body = CLAIM_BODY(1);
  await fullCycle(server.url, { authorization: `Bearer ${key}` }, idem, body);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': idem };
  const check = await fetch(`${server.url}/v1/operations`, { method: 'POST', headers, body });
  const answer = (await check.json()) as { outcome?: string };
  if (check.status !== 200 || answer.outcome !== 'replayed') throw new Error(`replay bench: expected 200 replayed, got ${check.status} ${JSON.stringify(answer)}`);
  return { method: 'POST', path: '/v1/operations', headers, body };
}

/**
 * `POST /v1/fingerprint` with a claim's body, again and again: the HTTP edge without store work.
 * `who` names the caller (the product's Authorization, the lean server's account).
 */
export function fingerprintTarget(who: Record<string, string>): Omit<LoadOptions, 'url' | 'connections' | 'seconds'> {
  return { method: 'POST', path: '/v1/fingerprint', headers: { 'content-type': 'application/json', ...who }, body: CLAIM_BODY(1) };
}

/** The lean replay's load: replayTarget's on the lean server, in the account of the product's first key. */
export async function leanReplayTarget(leanUrl: string): Promise<Omit<LoadOptions, 'url' | 'connections' | 'seconds'>> {
  const idem = `bench-replay-${crypto.randomBytes(4).toString('hex')}`;
  const body = CLAIM_BODY(1);
  const headers = { 'content-type': 'application/json', 'idempotency-key': idem, ...leanAccount(0) };
  await fullCycle(leanUrl, leanAccount(0), idem, body);
  const check = await post(`${leanUrl}/v1/operations`, headers, body);
  if (check.status !== 200 || (JSON.parse(check.text) as { outcome?: string }).outcome !== 'replayed') throw new Error(`lean replay bench: expected 200 replayed, got ${check.status} ${check.text}`);
  return { method: 'POST', path: '/v1/operations', headers, body };
}

/** How the lean server is told the account the i-th API key of the product's load would name. */
export function leanAccount(i: number): Record<string, string> {
  return { 'x-bench-account': `bench-${i % ACCOUNTS}` };
}

export interface GroupCommitStats {
  batches: number;
  mean_batch_size: number;
  mean_commit_ms: number;
}

/** The service's own counters (GET /metrics with the admin key); null when it has none. */
async function scrapeMetrics(server: BenchServer): Promise<Map<string, number> | null> {
  const r = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  if (r.status !== 200) return null;
  const values = new Map<string, number>();
  for (const line of (await r.text()).split('\n')) {
    const m = /^(gatehouse_store_batch_size_(?:sum|count)|gatehouse_store_commit_seconds_(?:sum|count))\s+(\S+)$/.exec(line);
    if (m) values.set(m[1]!, Number(m[2]));
  }
  return values;
}

function commitStats(before: Map<string, number> | null, after: Map<string, number> | null): GroupCommitStats | null {
  if (!before || !after) return null;
  const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  const batches = delta('gatehouse_store_batch_size_count');
  if (batches === 0) return null;
  return {
    batches,
    mean_batch_size: round(delta('gatehouse_store_batch_size_sum') / batches, 1),
    mean_commit_ms: round((delta('gatehouse_store_commit_seconds_sum') * 1000) / delta('gatehouse_store_commit_seconds_count'), 2),
  };
}

export interface CycleRate { per_sec: number; workers: number; failures: number }

/** `workers` workers, each looping claim → sent → completed with a new key, spread over `keys` (the accounts). */
export function cycleLoad(server: BenchServer, keys: string[], workers: number, seconds: number): Promise<CycleRate> {
  return cycles(workers, seconds, (i, idem) => fullCycle(server.url, { authorization: `Bearer ${keys[i % keys.length]!}` }, idem, CLAIM_BODY(i)));
}

/** The same cycles on the lean server (lean-claim.ts), spread over the same number of accounts: the floor of a cycle. */
export function leanCycleLoad(leanUrl: string, workers: number, seconds: number): Promise<CycleRate> {
  return cycles(workers, seconds, (i, idem) => fullCycle(leanUrl, leanAccount(i), idem, CLAIM_BODY(i)));
}

/** A cycle rate in a Rate's shape, for code that reads `rps`: cycles/s as its rps, failed cycles as its non-2xx; a cycle has no one latency. */
export function cyclesAsRate(cycles: CycleRate): Rate {
  return { rps: cycles.per_sec, p50_ms: NaN, p99_ms: NaN, max_ms: NaN, max_steady_ms: NaN, non2xx: cycles.failures, errors: 0 };
}

/** The loads a single-server tool can put on the product or on the lean server (profile-claims.ts, gc-trace.ts). */
export const SERVER_LOADS = ['new-key', 'replays', 'cycles', 'fingerprint'] as const;
export type ServerLoad = (typeof SERVER_LOADS)[number];

/**
 * `kind` at 50 connections (50 workers for cycles) on a product server: what it needs (the
 * operation replayed) is set up now, and the load runs when the function returned is called, so
 * a caller can leave the set-up out of what it measures.
 */
export async function productLoad(kind: ServerLoad, server: BenchServer, keys: string[], seconds: number): Promise<() => Promise<Rate>> {
  switch (kind) {
    case 'replays': {
      const target = await replayTarget(server, keys[0]!);
      return () => load({ ...target, url: server.url, connections: 50, seconds });
    }
    case 'new-key': return () => newKeyLoad([server], keys, 50, seconds);
    case 'cycles': return async () => cyclesAsRate(await cycleLoad(server, keys, 50, seconds));
    case 'fingerprint': return () => load({ ...fingerprintTarget({ authorization: `Bearer ${keys[0]!}` }), url: server.url, connections: 50, seconds });
  }
}

/** The same load on the lean server (lean-claim.ts): its floor. */
export async function leanServerLoad(kind: ServerLoad, leanUrl: string, seconds: number): Promise<() => Promise<Rate>> {
  switch (kind) {
    case 'replays': {
      const target = await leanReplayTarget(leanUrl);
      return () => load({ ...target, url: leanUrl, connections: 50, seconds });
    }
    case 'new-key': return () => leanLoad(leanUrl, 50, seconds);
    case 'cycles': return async () => cyclesAsRate(await leanCycleLoad(leanUrl, 50, seconds));
    case 'fingerprint': return () => load({ ...fingerprintTarget(leanAccount(0)), url: leanUrl, connections: 50, seconds });
  }
}

/** Cycles of several slices of equal length: their mean rate, every failure counted. */
function averageCycles(slices: CycleRate[]): CycleRate {
  return { per_sec: round(slices.reduce((sum, s) => sum + s.per_sec, 0) / slices.length, 1), workers: slices[0]!.workers, failures: slices.reduce((sum, s) => sum + s.failures, 0) };
}

async function cycles(workers: number, seconds: number, cycle: (i: number, idem: string) => Promise<void>): Promise<CycleRate> {
  const run = crypto.randomBytes(4).toString('hex');
  let done = 0;
  let failures = 0;
  let n = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: workers }, async () => {
    while (performance.now() < deadline) {
      const i = n++;
      try {
        await cycle(i, `bench-cycle-${run}-${i}`);
        done++;
      } catch {
        failures++;
      }
    }
  }));
  return { per_sec: round((done * 1000) / (performance.now() - started), 1), workers, failures };
}

/** One claim → sent → completed; `who` names the caller (the product's Authorization, the lean server's account). */
export async function fullCycle(url: string, who: Record<string, string>, idem: string, body: string): Promise<void> {
  const headers = { 'content-type': 'application/json', ...who };
  const claim = await post(`${url}/v1/operations`, { ...headers, 'idempotency-key': idem }, body);
  const claimed = JSON.parse(claim.text) as { execute?: boolean; operation?: { id: string }; lease?: { token: string } };
  if (claim.status !== 201 || !claimed.execute || !claimed.operation || !claimed.lease) throw new Error(`claim answered ${claim.status} ${claim.text}`);
  const events = `${url}/v1/operations/${claimed.operation.id}/events`;
  for (const report of [
    { type: 'sent', lease_token: claimed.lease.token },
    { type: 'completed', lease_token: claimed.lease.token, outcome: 'succeeded', response: { status: 201, body: { ticket: idem } } },
  ]) {
    const r = await post(events, headers, JSON.stringify(report));
    if (r.status !== 200) throw new Error(`${report.type} answered ${r.status} ${r.text}`);
  }
}

/**
 * The cycle's client: node:http on kept-alive connections. It was global `fetch`, which cost this
 * process ~330 µs of CPU per request (~1 ms per cycle, as much as the server's work): on a 2-core
 * machine the load generator took the CPU the server needed, and the cycle rate measured the client.
 */
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** A POST on the bench's keep-alive agent; `agent: false`, on a connection of its own. */
export function post(url: string, headers: Record<string, string>, body: string, options: { agent?: http.Agent | false } = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent: options.agent ?? keepAlive, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

export interface LoadOptions {
  url: string;
  connections: number;
  seconds: number;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: autocannon.Request) => autocannon.Request;
  /** Each answer's latency in ms, as it arrives. */
  onAnswer?: (ms: number) => void;
}

export async function load(options: LoadOptions): Promise<Rate> {
  const request: autocannon.Request = { method: options.method, path: options.path, headers: options.headers, body: options.body };
  if (options.setupRequest) request.setupRequest = options.setupRequest as (req: autocannon.Request, context: object) => autocannon.Request;
  const began = performance.now();
  let maxSteady = 0;
  const result = await runAutocannon({ url: options.url, connections: options.connections, duration: options.seconds, requests: [request] }, (ms) => {
    if (ms > maxSteady && performance.now() - began >= 1000) maxSteady = ms;
    options.onAnswer?.(ms);
  });
  const elapsed = (result.finish.getTime() - result.start.getTime()) / 1000;
  return {
    rps: round(result['2xx'] / elapsed, 1), p50_ms: result.latency.p50, p99_ms: result.latency.p99, max_ms: result.latency.max,
    max_steady_ms: Math.round(maxSteady), non2xx: result.non2xx, errors: result.errors,
  };
}

/** autocannon, with each answer's latency (ms) handed to `onAnswer` as it arrives. */
function runAutocannon(options: autocannon.Options, onAnswer: (ms: number) => void): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    instance.on('response', (_client, _status, _bytes, ms) => onAnswer(ms));
  });
}

/** Two autocannon runs side by side: rates add up; the slower p50/p99 is reported (conservative). */
function combine(rates: Rate[]): Rate {
  return rates.reduce((a, b) => ({
    rps: round(a.rps + b.rps, 1), p50_ms: Math.max(a.p50_ms, b.p50_ms), p99_ms: Math.max(a.p99_ms, b.p99_ms), max_ms: Math.max(a.max_ms, b.max_ms),
    max_steady_ms: Math.max(a.max_steady_ms, b.max_steady_ms),
    non2xx: a.non2xx + b.non2xx, errors: a.errors + b.errors,
  }));
}

/** Slices of one measurement: mean rate, the worse latency percentiles, all failures. */
function average(rates: Rate[]): Rate {
  const sum = combine(rates);
  return { ...sum, rps: round(sum.rps / rates.length, 1) };
}

/** Mean of the slices' CPU usage; null without /proc. */
function averageCpu(usages: Array<CpuUsage | null>): CpuUsage | null {
  const known = usages.filter((u): u is CpuUsage => u !== null);
  if (known.length === 0) return null;
  const mean = (pick: (u: CpuUsage) => number) => Math.round(known.reduce((sum, u) => sum + pick(u), 0) / known.length);
  const groups = Object.keys(known[0]!.by_group_pct);
  return {
    machine_busy_pct: mean((u) => u.machine_busy_pct),
    by_group_pct: Object.fromEntries(groups.map((g) => [g, mean((u) => u.by_group_pct[g] ?? 0)])),
  };
}

function splitConnections(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

// ---------------------------------------------------------------------------------------------
// Servers as child processes

export interface BenchServer {
  url: string;
  adminKey: string | null;
  pid: number;
}

export interface Child extends BenchServer {
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The Node flags `npm start` gives `gatehouse serve` (package.json), read from there so the two
 * cannot drift: every server the bench starts, the product's and the ceilings and floors beside
 * it, runs on the same runtime settings (a larger young generation: docs/cli.md, `serve`).
 */
export const SERVER_NODE_ARGS: readonly string[] = (() => {
  const start = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const flags = / node ((?:--\S+ )*)bin\/gatehouse\.js serve/.exec(start);
  if (!flags) throw new Error(`bench: package.json's start script no longer runs "node [flags] bin/gatehouse.js serve": ${start}`);
  return flags[1]!.split(' ').filter((flag) => flag !== '');
})();

/**
 * A server in a child process, with SERVER_NODE_ARGS before `args` (a flag in `args` wins);
 * `wrapper`, a command that runs node (valgrind, bench/http-instructions.ts).
 */
export function startChild(name: string, args: string[], listening: RegExp, env: NodeJS.ProcessEnv = {}, wrapper: readonly string[] = []): Promise<Child> {
  const command = [...wrapper, process.execPath, ...SERVER_NODE_ARGS, ...args];
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name}: not listening within 60 s\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 60_000);
    child.once('exit', (code, signal) => reject(new Error(`${name} exited (${code ?? signal}) before listening\nstdout: ${stdout}\nstderr: ${stderr}`)));
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = stdout.match(listening);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, adminKey: stdout.match(/admin key: (gh_[A-Za-z0-9_-]+)/)?.[1] ?? null, pid: child.pid!, process: child, stop });
      }
    });
  });
}

/** `bin`: another checkout's bin/gatehouse.js, for an A/B against an older tree (bench/ab.ts). */
type StoreChoice = ({ kind: 'sqlite' } | { kind: 'postgres'; adminUrl: string }) & { serveArgs?: string[]; bin?: string; nodeArgs?: string[]; wrapper?: string[] };

/**
 * Starts `count` gatehouse instances on a fresh store, runs `body`, stops them (so `--cpu-prof`
 * profiles are written) and drops the store. Only the first instance prints the admin key.
 */
export async function withGatehouse<T>(
  choice: StoreChoice, count: number, profile: boolean | undefined, profiles: string[], body: (servers: BenchServer[]) => Promise<T>,
): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-'));
  let database: string | null = null;
  let storeArgs = ['--data-dir', dataDir];
  if (choice.kind === 'postgres') {
    database = `gh_bench_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
    await adminQuery(choice.adminUrl, `CREATE DATABASE ${database}`);
    const url = new URL(choice.adminUrl);
    url.pathname = `/${database}`;
    storeArgs = [...storeArgs, '--database-url', url.toString()];
  }
  const profileDir = path.join(ROOT, 'bench/results/profiles');
  const children: Child[] = [];
  try {
    // The first instance initialises the data dir (key files); the others share it.
    for (let i = 0; i < count; i++) {
      const nodeArgs = [...(choice.nodeArgs ?? []), ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${choice.kind}-${count}x-${i}-${Date.now()}.cpuprofile`] : [])];
      children.push(await startChild(`gatehouse serve #${i}`, [...nodeArgs, choice.bin ?? BIN, 'serve', '--host', '127.0.0.1', '--port', '0', ...storeArgs, ...(choice.serveArgs ?? [])], /gatehouse listening on (http:\/\/\S+)/, {}, choice.wrapper));
    }
    const adminKey = children.find((c) => c.adminKey)?.adminKey ?? null;
    return await body(children.map((c) => ({ url: c.url, adminKey, pid: c.pid })));
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    if (profile && fs.existsSync(profileDir)) profiles.push(...fs.readdirSync(profileDir).filter((f) => f.startsWith(`${choice.kind}-${count}x-`)).map((f) => path.join(profileDir, f)));
    if (database && choice.kind === 'postgres') await adminQuery(choice.adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One gateway key per bench account, made through the API with the first admin's key. */
export async function gatewayKeys(server: BenchServer, accounts = ACCOUNTS): Promise<string[]> {
  if (!server.adminKey) throw new Error('bench: no admin key printed');
  return Promise.all(Array.from({ length: accounts }, async (_, i) => {
    const r = await fetch(`${server.url}/v1/principals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.adminKey}` },
      body: JSON.stringify({ account_id: `bench-${i}`, roles: ['gateway'] }),
    });
    const body = (await r.json()) as { key?: string };
    if (r.status !== 201 || !body.key) throw new Error(`bench: POST /v1/principals answered ${r.status} ${JSON.stringify(body)}`);
    return body.key;
  }));
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' }, profile: { type: 'boolean', default: false }, 'postgres-only': { type: 'boolean', default: false }, bin: { type: 'string' } },
  });
  const log = (line: string) => process.stderr.write(line + '\n');
  const result = values['postgres-only']
    ? await benchPostgresInstances(defaultPostgresAdminUrl(), Number(values.connections), Number(values.seconds), values.profile, [], log, values.bin && path.resolve(values.bin))
    : await benchHttpClaims({ seconds: Number(values.seconds), connections: Number(values.connections), profile: values.profile });
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

/**
 * PostgreSQL, new-key claims: one instance, two with any account on either, two with each account
 * on one, measured in alternating slices. Alone: `node --import=tsx bench/http-claims.ts --postgres-only [--bin other/bin/gatehouse.js]`.
 */
export function benchPostgresInstances(
  adminUrl: string, connections: number, seconds: number, profile: boolean | undefined, profiles: string[], log: (line: string) => void, bin?: string,
): Promise<Exclude<HttpClaimsResult['postgres'], { skipped: string }>> {
  return withGatehouse({ kind: 'postgres', adminUrl, bin }, 1, profile, profiles, (single) =>
    withGatehouse({ kind: 'postgres', adminUrl, bin }, 2, profile, profiles, async (pair) => {
      const singleKeys = await gatewayKeys(single[0]!);
      const pairKeys = await gatewayKeys(pair[0]!);
      const setups: Array<{ name: string; servers: BenchServer[]; keys: string[]; routing: Routing }> = [
        { name: 'one instance', servers: single, keys: singleKeys, routing: 'any' },
        { name: 'two instances, any account on either', servers: pair, keys: pairKeys, routing: 'any' },
        { name: 'two instances, each account on one', servers: pair, keys: pairKeys, routing: 'by-account' },
      ];
      for (const setup of setups) await newKeyLoad(setup.servers, setup.keys, connections, warmup(seconds), setup.routing);
      const slices: Rate[][] = setups.map(() => []);
      const cpu: Array<Array<CpuUsage | null>> = setups.map(() => []);
      const rounds = Math.min(PG_ROUNDS, Math.max(1, Math.floor(seconds)));
      const sliceSeconds = Math.max(1, Math.round(seconds / rounds));
      const before = await scrapeMetrics(single[0]!);
      for (let round = 0; round < rounds; round++) {
        const order = setups.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) {
          const setup = setups[i]!;
          log(`postgres, ${setup.name}: new-key claims (slice ${round + 1} of ${rounds})`);
          const groups = { gatehouse: setup.servers.map((server) => server.pid), 'load generator': [process.pid] };
          const before = sampleCpu(groups);
          slices[i]!.push(await newKeyLoad(setup.servers, setup.keys, connections, sliceSeconds, setup.routing));
          cpu[i]!.push(cpuUsage(before, sampleCpu(groups)));
        }
      }
      return {
        one_instance: average(slices[0]!), two_instances: average(slices[1]!), two_instances_by_account: average(slices[2]!),
        group_commit: commitStats(before, await scrapeMetrics(single[0]!)),
        cpu: { one_instance: averageCpu(cpu[0]!), two_instances: averageCpu(cpu[1]!), two_instances_by_account: averageCpu(cpu[2]!) },
      };
    }));
}
