// Instructions per new-key claim over HTTP, counted by callgrind in the server: `gatehouse serve`
// (dist/, SQLite) beside the lean claim's server (bench/lean-claim.ts, compiled), each under
// valgrind, each sent the same claims on loopback by 50 keep-alive connections from this process
// (which valgrind does not count). Where claim-instructions.ts counts the domain's claim without
// HTTP, this counts everything the server does for one: Koa, authentication, validation, the
// claim, the answer, the group commit, the event loop and the sockets' system calls' user side.
//
//   npx tsx bench/http-instructions.ts [--claims 3000] [--warm 8000] [--only product --only lean] [--names] [--top 40] [--keep DIR] [--json]
//
// --names names the JIT-compiled JS functions from V8's perf map, as claim-instructions' does
// (and costs instructions of its own: compare runs made the same way).
// Each server runs as claim-instructions.ts runs claim-path (the same flags and why:
// --single-threaded, no memory reducer, a 2 GiB initial old space, the service's Node flags).
// `--warm` claims first, then the counters are zeroed and `--claims` claims counted.
//
// The product's server also runs its periodic passes (lease and approval sweeps every second,
// the store's 100 ms tick, checkpoints): under valgrind, which runs ~50× slower, they would weigh
// ~50× as much per claim as they do at full speed. So each server is also counted idle, for as
// long as its claims took, and that count (function by function) is taken off its claims'.
// The table gives both: `claims (raw)` and `claims` (idle taken off).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CALLGRIND_NODE_FLAGS, callgrindCommand, dumpCost, instructionsTable, parseDump, perClaim, perfMapFlags, perfMapNamer, topExcess, type DumpCost, type InstructionsResult } from './claim-instructions.js';
import { compiledScript } from './compiled.js';
import { gatewayKeys, leanAccount, NEW_KEY_CLAIM_BODY, post, startChild, withGatehouse, type BenchServer } from './http-claims.js';

const CONNECTIONS = 50;

export interface HttpInstructionsOptions {
  claims?: number;
  warm?: number;
  only?: Array<'product' | 'lean'>;
  names?: boolean;
  keep?: string;
  top?: number;
  log?: (line: string) => void;
}

/** One server's counts: its claims, and its idle run stretched to the claims' duration. */
interface ServerCounts {
  claims: DumpCost;
  idle: DumpCost;
  claimsSeconds: number;
  idleSeconds: number;
}

export async function benchHttpInstructions(options: HttpInstructionsOptions = {}): Promise<InstructionsResult> {
  const claims = options.claims ?? 3000;
  const warm = options.warm ?? 8000;
  const only = options.only ?? ['product', 'lean'];
  const log = options.log ?? (() => undefined);
  const dir = options.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-http-callgrind-'));
  fs.mkdirSync(dir, { recursive: true });
  const counted = new Map<string, ServerCounts>();
  try {
    /** Where one server's dumps (and perf map) go. */
    const serverDir = (name: string) => {
      const serverDumps = path.join(dir, name);
      fs.mkdirSync(serverDumps, { recursive: true });
      return serverDumps;
    };
    if (only.includes('product')) {
      const productDir = serverDir('product');
      const nodeArgs = [...CALLGRIND_NODE_FLAGS, ...perfMapFlags(options.names, productDir)];
      counted.set('claims', await withGatehouse({ kind: 'sqlite', wrapper: callgrindCommand(productDir), nodeArgs }, 1, false, [], async ([server]) => {
        const keys = await gatewayKeys(server!);
        return countServer('product', server!, (i) => ({ authorization: `Bearer ${keys[i % keys.length]}` }), { claims, warm, dir: productDir, log });
      }));
    }
    if (only.includes('lean')) {
      const leanDir = serverDir('lean');
      const nodeArgs = [...CALLGRIND_NODE_FLAGS, ...perfMapFlags(options.names, leanDir)];
      const lean = await startChild('lean claim', [...nodeArgs, compiledScript('bench/lean-claim.ts')], /listening on (http:\/\/\S+)/, {}, callgrindCommand(leanDir));
      try {
        counted.set('lean', await countServer('lean', lean, leanAccount, { claims, warm, dir: leanDir, log }));
      } finally {
        await lean.stop();
      }
    }
  } finally {
    if (!options.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
  const result: InstructionsResult = { per_operation: {}, claims, warm };
  const net = new Map<string, DumpCost>();
  for (const [name, counts] of counted) {
    const withoutIdle = subtract(counts.claims, counts.idle, counts.claimsSeconds / counts.idleSeconds);
    net.set(name, withoutIdle);
    if (name === 'claims') result.per_operation['claims (raw)'] = perClaim(counts.claims, claims);
    result.per_operation[name] = perClaim(withoutIdle, claims);
    log(`${name}: ${claims} claims in ${counts.claimsSeconds.toFixed(0)} s under valgrind; idle ${Math.round(counts.idle.instructions / counts.idleSeconds).toLocaleString('en-US')} instructions/s`);
  }
  if (options.top && net.get('claims')) for (const line of topExcess(net.get('claims')!, net.get('lean'), claims, options.top)) log(line);
  return result;
}

async function countServer(
  name: string, server: BenchServer, headersFor: (i: number) => Record<string, string>,
  { claims, warm, dir, log }: { claims: number; warm: number; dir: string; log: (line: string) => void },
): Promise<ServerCounts> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  try {
    log(`${name}: ${warm} warm-up claims under valgrind`);
    await sendClaims(server.url, warm, headersFor, agent);
    // Idle first, then the claims, each between a zero and a dump of the server's counters.
    const idleSeconds = Math.max(5, Math.min(60, warm / 200));
    await control(server.pid, '--zero');
    let began = performance.now();
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    await control(server.pid, '--dump=idle');
    const idleMeasured = (performance.now() - began) / 1000;
    log(`${name}: ${claims} counted claims`);
    await control(server.pid, '--zero');
    began = performance.now();
    await sendClaims(server.url, claims, headersFor, agent);
    const claimsSeconds = (performance.now() - began) / 1000;
    await control(server.pid, '--dump=claims');
    const dumps = readDumps(dir, server.pid);
    return { claims: dumps.get('claims')!, idle: dumps.get('idle')!, claimsSeconds, idleSeconds: idleMeasured };
  } finally {
    agent.destroy();
  }
}

/** `count` new-key claims, CONNECTIONS at a time; any answer but 201 created stops the bench. */
async function sendClaims(url: string, count: number, headersFor: (i: number) => Record<string, string>, agent: http.Agent): Promise<void> {
  const run = crypto.randomBytes(4).toString('hex');
  let next = 0;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (next < count) {
      const i = next++;
      const answer = await post(`${url}/v1/operations`, { 'content-type': 'application/json', 'idempotency-key': `callgrind-${run}-${i}`, ...headersFor(i) }, NEW_KEY_CLAIM_BODY(i), { agent });
      if (answer.status !== 201) throw new Error(`claim ${i}: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
  }));
}

function control(pid: number, action: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('callgrind_control', [action, String(pid)], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control ${action} ${pid}: exit ${code}`))));
  });
}

/** The named dumps callgrind wrote for `pid` (callgrind.PID.N). */
function readDumps(dir: string, pid: number): Map<string, DumpCost> {
  const dumps = new Map<string, DumpCost>();
  const nameOf = perfMapNamer(pid, dir);
  for (const file of fs.readdirSync(dir).filter((f) => f.startsWith(`callgrind.${pid}.`))) {
    const dump = parseDump(fs.readFileSync(path.join(dir, file), 'utf8'), nameOf);
    dumps.set(dump.name, dump);
  }
  if (!dumps.has('claims') || !dumps.has('idle')) throw new Error(`bench: no claims and idle dumps of ${pid} in ${dir}`);
  return dumps;
}

/** `a` less `b` × `times`, function by function (a function's count never below zero). */
function subtract(a: DumpCost, b: DumpCost, times: number): DumpCost {
  const byFunction = new Map(a.byFunction);
  for (const [key, cost] of b.byFunction) byFunction.set(key, Math.max(0, (byFunction.get(key) ?? 0) - cost * times));
  return dumpCost(a.name, byFunction);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      claims: { type: 'string' }, warm: { type: 'string' }, only: { type: 'string', multiple: true }, names: { type: 'boolean', default: false },
      top: { type: 'string' }, keep: { type: 'string' }, json: { type: 'boolean', default: false },
    },
  });
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const log = (line: string) => process.stderr.write(line + '\n');
  const result = await benchHttpInstructions({
    claims: number(values.claims), warm: number(values.warm), only: values.only as HttpInstructionsOptions['only'], names: values.names, keep: values.keep, top: number(values.top), log,
  });
  process.stdout.write(values.json ? JSON.stringify(result, null, 2) + '\n' : instructionsTable(result).join('\n') + '\n');
}
