// An interleaved A/B between two checkouts of Gatehouse on SQLite: each tree's `gatehouse serve`
// runs side by side, and they are measured in alternating slices (A B, B A, …) so that machine
// noise hits both alike. For "no slowdown" (or "faster") against an older tree, checked out beside
// this one (git worktree add ../old <commit>, or `git archive`, with its node_modules and, for trees
// that ship JavaScript, `npm run build`).
//
//   node --import=tsx bench/ab.ts --a ../old/bin/gatehouse.js [--b bin/gatehouse.js] [--rounds 4] [--seconds 8]
//     [--load new-key|new-connections|replays|cycles|fingerprint] [--postgres] [--a-node-args='…'] [--b-node-args='…']
//
// --load: new-key claims (the default), new-key claims each on a connection of its own (a client
// without keep-alive: every request is a new connection to accept), replays of one finished
// operation, claim → sent → completed cycles (50 workers), or `POST /v1/fingerprint` (the HTTP
// edge alone: admission, authentication, routing, the body read, parsed and validated, the
// policy, no store work).
// Besides the rate, each slice records the server's CPU per operation (from /proc: on a 2-core
// machine shared with the load generator the rate is noisy, the CPU a request costs the server
// much less so) and the load generator's.
// --postgres runs both on PostgreSQL instead (each on a fresh database of the bench server).
// Both run with the Node flags `npm start` gives the service (http-claims.ts SERVER_NODE_ARGS);
// --a-node-args / --b-node-args add flags to one side (a flag given twice: the later wins), e.g.
// the same tree with and without a setting: --a bin/gatehouse.js --a-node-args=--max-semi-space-size=16.
import crypto from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuPerAnswer } from './cpu-usage.js';
import {
  CLAIM_BODY, cycleLoad, defaultPostgresAdminUrl, fingerprintTarget, gatewayKeys, load, newKeyLoad, post, replayTarget, withGatehouse, type BenchServer, type LoadOptions, type Rate,
} from './http-claims.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' }, b: { type: 'string', default: 'bin/gatehouse.js' }, rounds: { type: 'string', default: '4' }, seconds: { type: 'string', default: '8' },
    load: { type: 'string', default: 'new-key' }, postgres: { type: 'boolean', default: false },
    'a-node-args': { type: 'string', default: '' }, 'b-node-args': { type: 'string', default: '' },
  },
});
if (!values.a) throw new Error('--a PATH/bin/gatehouse.js: the tree to compare with');
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const bins = { A: path.resolve(values.a), B: path.resolve(values.b) };
const CONNECTIONS = 50;

interface Slice {
  /** Answers (cycles for --load cycles) per second. */
  per_sec: number;
  /** CPU of the server, and of this process (the load generator), per answer or cycle, in µs. */
  server_cpu_us: number;
  client_cpu_us: number;
  p99_ms: number | null;
  /** The slowest single answer (null for cycles). */
  max_ms: number | null;
}

type Measure = (seconds: number) => Promise<{ per_sec: number; p99_ms: number | null; max_ms: number | null }>;

/** The chosen load against one server. */
async function loadFor(kind: string, server: BenchServer, keys: string[]): Promise<Measure> {
  switch (kind) {
    case 'new-key':
      return asMeasure((s) => newKeyLoad([server], keys, CONNECTIONS, s));
    case 'new-connections':
      return (s) => newConnectionClaims(server, keys, s);
    case 'replays':
      return sameRequest(server, await replayTarget(server, keys[0]!));
    case 'cycles':
      return async (s) => ({ per_sec: (await cycleLoad(server, keys, CONNECTIONS, s)).per_sec, p99_ms: null, max_ms: null });
    case 'fingerprint':
      return sameRequest(server, fingerprintTarget({ authorization: `Bearer ${keys[0]!}` }));
    default:
      throw new Error(`--load ${kind}: new-key, new-connections, replays, cycles or fingerprint`);
  }
}

/** One request, sent again and again on every connection. */
function sameRequest(server: BenchServer, target: Omit<LoadOptions, 'url' | 'connections' | 'seconds'>): Measure {
  return asMeasure((s) => load({ ...target, url: server.url, connections: CONNECTIONS, seconds: s }));
}

function asMeasure(run: (seconds: number) => Promise<Rate>): Measure {
  return async (s) => {
    const rate = await run(s);
    return { per_sec: rate.rps, p99_ms: rate.p99_ms, max_ms: rate.max_ms };
  };
}

/** CONNECTIONS workers, each sending new-key claims one after another, every one on a new connection (autocannon keeps connections alive). */
async function newConnectionClaims(server: BenchServer, keys: string[], s: number): Promise<{ per_sec: number; p99_ms: number; max_ms: number }> {
  const run = crypto.randomBytes(4).toString('hex');
  const latencies: number[] = [];
  let n = 0;
  const began = performance.now();
  const until = began + s * 1000;
  const claim = async (i: number) => {
    const headers = { authorization: `Bearer ${keys[i % keys.length]}`, 'idempotency-key': `bench-nc-${run}-${i}`, 'content-type': 'application/json' };
    const sent = performance.now();
    const { status } = await post(`${server.url}/v1/operations`, headers, CLAIM_BODY(i), { agent: false });
    if (status !== 201) throw new Error(`new-connections: ${status}`);
    latencies.push(performance.now() - sent);
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < until) await claim(n++);
  }));
  latencies.sort((a, b) => a - b);
  return {
    per_sec: Math.round((latencies.length / ((performance.now() - began) / 1000)) * 10) / 10,
    p99_ms: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    max_ms: Math.round(latencies.at(-1) ?? 0),
  };
}

/** One slice, with the server's and this process's CPU over it. */
async function slice(server: BenchServer, measure: Measure, s: number): Promise<Slice> {
  const { result, server_cpu_us, client_cpu_us } = await cpuPerAnswer(server.pid, () => measure(s), (r) => r.per_sec);
  return { ...result, server_cpu_us, client_cpu_us };
}

const store = values.postgres ? { kind: 'postgres' as const, adminUrl: defaultPostgresAdminUrl() } : { kind: 'sqlite' as const };
const nodeArgs = (side: 'a' | 'b') => values[`${side}-node-args`]!.split(' ').filter((arg) => arg !== '');
const result = await withGatehouse({ ...store, bin: bins.A, nodeArgs: nodeArgs('a') }, 1, false, [], ([a]) =>
  withGatehouse({ ...store, bin: bins.B, nodeArgs: nodeArgs('b') }, 1, false, [], async ([b]) => {
    const servers = { A: a!, B: b! };
    const measures = {
      A: await loadFor(values.load!, a!, await gatewayKeys(a!)),
      B: await loadFor(values.load!, b!, await gatewayKeys(b!)),
    };
    for (const side of ['A', 'B'] as const) await measures[side](2);
    const slices: Record<'A' | 'B', Slice[]> = { A: [], B: [] };
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
        const measured = await slice(servers[side], measures[side], seconds);
        slices[side].push(measured);
        process.stderr.write(`[ab] ${values.load} round ${round + 1} ${side}: ${JSON.stringify(measured)}\n`);
      }
    }
    return slices;
  }));
const mean = (slices: Slice[], pick: (s: Slice) => number) => Math.round(slices.reduce((sum, s) => sum + pick(s), 0) / slices.length);
const summary = {
  load: values.load, a: bins.A, b: bins.B, rounds, seconds,
  a_per_sec: result.A.map((s) => s.per_sec), b_per_sec: result.B.map((s) => s.per_sec),
  a_server_cpu_us: result.A.map((s) => s.server_cpu_us), b_server_cpu_us: result.B.map((s) => s.server_cpu_us),
  a_client_cpu_us: result.A.map((s) => s.client_cpu_us), b_client_cpu_us: result.B.map((s) => s.client_cpu_us),
  a_p99_ms: result.A.map((s) => s.p99_ms), b_p99_ms: result.B.map((s) => s.p99_ms),
  a_max_ms: result.A.map((s) => s.max_ms), b_max_ms: result.B.map((s) => s.max_ms),
  b_over_a: Math.round((mean(result.B, (s) => s.per_sec) / mean(result.A, (s) => s.per_sec)) * 1000) / 1000,
  b_over_a_server_cpu: Math.round((mean(result.B, (s) => s.server_cpu_us) / mean(result.A, (s) => s.server_cpu_us)) * 1000) / 1000,
};
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
