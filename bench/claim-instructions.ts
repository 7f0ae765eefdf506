// Instructions per claim (and per report or replay), counted by callgrind: the claim path of
// bench/claim-path.ts, product beside the lean claim, with where the instructions go. CPU time on
// these shared 2-core hosts moves ±10 % with the neighbours' load and by 2× from host to host;
// an instruction count is the same on a loaded host and a quiet one, so a change of 1 % shows,
// and the product's excess over its floor can be taken apart by what runs it (V8's compiler, its
// garbage collector, SQLite, …), which a sampling profile of JIT code cannot do well.
//
//   npx tsx bench/claim-instructions.ts [--claims 3000] [--warm 2000] [--only claims --only lean] [--names] [--top 25] [--keep DIR] [--json]
//
// It runs `valgrind --tool=callgrind node --single-threaded <the service's Node flags> …
// claim-path.js`, compiled by tsc as the service is (compiled.ts) (about 5 minutes for claims and lean at the defaults: valgrind runs ~50× slower).
// - --single-threaded: V8's compiler and GC threads, which valgrind runs one at a time, would
//   otherwise do their work at points that vary from run to run; on the main thread it lands
//   where the claims make it. Compiling is reported apart ("V8 optimising compiler"): with a
//   longer --warm less of it falls inside the measured claims.
// - --no-memory-reducer and --initial-old-space-size=2048: no full collection in the measured
//   runs. When V8 runs one depends on timings (the memory reducer runs them when a process
//   allocates few bytes per millisecond, which is how any process looks under valgrind; the heap's
//   growth uses measured mutator and GC speeds), so under valgrind their count moved from run to
//   run by up to 100,000 instructions per claim with the load of the host. Young-generation
//   collections, which come with the bytes allocated, are counted; the full collections' share is
//   for the CPU-time benches to show.
// - with --names, --perf-basic-prof: V8 writes where it put each JIT-compiled function
//   (/tmp/perf-PID.map; the V8 log that flag turns on goes to the dump directory, not the cwd); callgrind knows that code only by address, and the map names it
//   (`JS: name file:line`). Writing the map costs instructions too (~10,000 per claim, GC and
//   malloc): compare runs made the same way.
// - the service's Node flags (`npm start`'s, SERVER_NODE_ARGS): the young generation the service
//   runs with decides how much the garbage collector does per claim.
// - claim-path.ts, under GATEHOUSE_CALLGRIND=1, closes the HTTP server's periodic passes (they
//   would run 50× as often per claim) and dumps the counters after each measured run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { compiledScript } from './compiled.js';
import { SERVER_NODE_ARGS } from './http-claims.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface DumpCost {
  /** The measured run this dump counted (claim-path.ts's names: claims, lean, sent, …). */
  name: string;
  instructions: number;
  /** Self instructions by what ran them. */
  byCategory: Record<string, number>;
  byFunction: Map<string, number>;
}

/** Self cost (instructions) per function of one callgrind dump, with the object each function is in. */
export function parseDump(text: string, nameOf: (fn: string) => string = (fn) => fn): DumpCost {
  const fnNames = new Map<string, string>();
  const obNames = new Map<string, string>();
  const byFunction = new Map<string, number>();
  let name = '';
  let fn = '';
  let ob = '';
  let callCostNext = false;
  const named = (table: Map<string, string>, value: string) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(value);
    if (!m) return value;
    if (m[2] !== undefined) table.set(m[1]!, m[2]);
    return table.get(m[1]!) ?? value;
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) fn = `${nameOf(named(fnNames, line.slice(3)))}\t${ob}`;
    else if (line.startsWith('ob=')) ob = named(obNames, line.slice(3));
    else if (line.startsWith('cfn=')) named(fnNames, line.slice(4));
    else if (line.startsWith('cob=')) named(obNames, line.slice(4));
    else if (line.startsWith('calls=')) callCostNext = true; // the next cost line is the call's inclusive cost
    else if (line.startsWith('desc: Trigger: dump ')) name = line.slice('desc: Trigger: dump '.length).trim();
    else if (/^[0-9+\-*]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0);
      if (callCostNext) callCostNext = false;
      else byFunction.set(fn, (byFunction.get(fn) ?? 0) + cost);
    }
  }
  return dumpCost(name, byFunction);
}

/** A dump's totals, by category and in all, from its self cost per function. */
export function dumpCost(name: string, byFunction: Map<string, number>): DumpCost {
  const byCategory: Record<string, number> = {};
  let instructions = 0;
  for (const [key, cost] of byFunction) {
    const category = categoryOf(key);
    byCategory[category] = (byCategory[category] ?? 0) + cost;
    instructions += cost;
  }
  return { name, instructions, byCategory, byFunction };
}

/**
 * Names callgrind's `0x…` functions (code it found in no object: V8's JIT code) from V8's perf
 * map. Code a later compile put at the same place is named by the last entry: the map keeps every
 * placement, and the newest is the one the counted instructions most likely ran.
 */
export function jitNamer(map: string): (fn: string) => string {
  const ranges = map.split('\n').flatMap((line) => {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    return m ? [{ start: Number.parseInt(m[1]!, 16), end: Number.parseInt(m[1]!, 16) + Number.parseInt(m[2]!, 16), name: m[3]! }] : [];
  });
  ranges.sort((a, b) => a.start - b.start);
  return (fn) => {
    if (!fn.startsWith('0x')) return fn;
    const address = Number.parseInt(fn, 16);
    let lo = 0;
    let hi = ranges.length - 1;
    let found: string | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const range = ranges[mid]!;
      if (range.start <= address) {
        if (address < range.end) found = range.name;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found ? `JS: ${found.replace(/^JS:/, '').replace(/file:\/\/\S*\/(src|bench|node_modules)\//, '$1/')}` : fn;
  };
}

/** What ran an instruction, from its function's name and object (`name\tobject`). */
export function categoryOf(key: string): string {
  const [fn = '', ob = ''] = key.split('\t');
  if (ob.includes('better_sqlite3')) return 'SQLite';
  if (/sha256/i.test(fn)) return 'SHA-256 (OpenSSL)';
  if (ob.includes('libc.so')) return /malloc|free|realloc|calloc/.test(fn) ? 'malloc' : /mem|str/.test(fn) ? 'libc memory, strings' : 'libc other';
  if (ob === '' || ob.includes('???') || fn.startsWith('0x') || fn.startsWith('JS: ')) return 'JIT code (JS, wasm)';
  if (/compiler::|maglev|turboshaft|Pipeline/i.test(fn)) return 'V8 optimising compiler';
  if (/Mark|Scaveng|Sweep|Evacuat|Heap::|heap::|GCTracer|LiveObject|RememberedSet|SlotSet|Compactor|Worklist|PretenuringHandler/.test(fn)) return 'V8 garbage collector';
  if (fn.startsWith('Builtins_')) return 'V8 builtins (ICs, promises, …)';
  if (/interpreter::|baseline/i.test(fn)) return 'V8 interpreter, baseline';
  return 'V8 and Node runtime (C++)';
}

export interface InstructionsResult {
  per_operation: Record<string, { instructions: number; by_category: Record<string, number> }>;
  claims: number;
  warm: number;
}

export async function benchClaimInstructions(options: { claims?: number; warm?: number; only?: string[]; names?: boolean; keep?: string; top?: number; log?: (line: string) => void } = {}): Promise<InstructionsResult> {
  const claims = options.claims ?? 3000;
  const warm = options.warm ?? 2000;
  const only = options.only ?? ['claims', 'lean'];
  const dir = options.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-callgrind-'));
  fs.mkdirSync(dir, { recursive: true });
  const [valgrind, ...args] = [
    ...callgrindCommand(dir), process.execPath, ...CALLGRIND_NODE_FLAGS, ...perfMapFlags(options.names, dir), ...SERVER_NODE_ARGS, compiledScript('bench/claim-path.ts'),
    '--claims', String(claims), '--warm', String(warm), ...only.flatMap((o) => ['--only', o]),
  ];
  const began = performance.now();
  const child = spawn(valgrind!, args, { cwd: ROOT, env: { ...process.env, GATEHOUSE_CALLGRIND: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', (error) => reject(new Error(`cannot run valgrind (Debian package valgrind): ${error.message}`)));
    child.on('exit', resolve);
  });
  if (code !== 0) throw new Error(`valgrind exited ${code}: ${stderr}`);
  options.log?.(`callgrind run: ${((performance.now() - began) / 1000).toFixed(0)} s, dumps in ${dir}`);
  const files = fs.readdirSync(dir).filter((f) => /^callgrind\.\d+\.\d+$/.test(f));
  const nameOf = perfMapNamer(Number(files[0]?.split('.')[1]), dir);
  const dumps = files.map((f) => parseDump(fs.readFileSync(path.join(dir, f), 'utf8'), nameOf));
  const result: InstructionsResult = { per_operation: {}, claims, warm };
  for (const dump of dumps) result.per_operation[dump.name] = perClaim(dump, claims);
  if (options.top && options.log) {
    const product = dumps.find((d) => d.name === 'claims');
    const lean = dumps.find((d) => d.name === 'lean');
    if (product) for (const line of topExcess(product, lean, claims, options.top)) options.log(line);
  }
  if (!options.keep) fs.rmSync(dir, { recursive: true, force: true });
  return result;
}

/** valgrind's callgrind as a command prefix, its dumps in `dir` (callgrind.PID, callgrind.PID.N per dump). */
export function callgrindCommand(dir: string): string[] {
  return ['valgrind', '--tool=callgrind', `--callgrind-out-file=${path.join(dir, 'callgrind.%p')}`];
}

/** The Node flags a counted process runs with (why: this file's first comment). */
export const CALLGRIND_NODE_FLAGS = ['--single-threaded', '--no-memory-reducer', '--initial-old-space-size=2048'] as const;

/** With `names`, V8 writes its perf map of JIT code; the V8 log that flag turns on goes to `dir`, not the cwd. */
export function perfMapFlags(names: boolean | undefined, dir: string): string[] {
  return names ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${path.join(dir, 'v8.log')}`] : [];
}

/** Names for process `pid`'s JIT code from its perf map, if it wrote one; the map is moved into `dir`, beside the dumps. */
export function perfMapNamer(pid: number, dir: string): ((fn: string) => string) | undefined {
  const perfMap = `/tmp/perf-${pid}.map`;
  if (!fs.existsSync(perfMap)) return undefined;
  const namer = jitNamer(fs.readFileSync(perfMap, 'utf8'));
  fs.renameSync(perfMap, path.join(dir, path.basename(perfMap)));
  return namer;
}

/** A dump's counts per claim: in all and by category. */
export function perClaim(dump: DumpCost, claims: number): InstructionsResult['per_operation'][string] {
  return {
    instructions: Math.round(dump.instructions / claims),
    by_category: Object.fromEntries(Object.entries(dump.byCategory).map(([k, v]) => [k, Math.round(v / claims)])),
  };
}

/** The functions whose self cost per claim most exceeds the lean claim's (or, measured alone, the dearest). */
export function topExcess(product: DumpCost, lean: DumpCost | undefined, claims: number, top: number): string[] {
  const keys = new Set([...product.byFunction.keys(), ...(lean?.byFunction.keys() ?? [])]);
  const rows = [...keys].map((key) => ({ key, a: (product.byFunction.get(key) ?? 0) / claims, b: (lean?.byFunction.get(key) ?? 0) / claims }));
  rows.sort((x, y) => (y.a - y.b) - (x.a - x.b));
  return ['| product | lean | excess | function (object) |', '|---|---|---|---|', ...rows.slice(0, top).map(({ key, a, b }) => {
    const [fn, ob] = key.split('\t');
    return `| ${Math.round(a)} | ${Math.round(b)} | ${Math.round(a - b)} | ${fn!.slice(0, 90)} (${path.basename(ob ?? '')}) |`;
  })];
}

/** Instructions per operation by category, one column per measured run. */
export function instructionsTable(result: InstructionsResult): string[] {
  const names = Object.keys(result.per_operation);
  const categories = [...new Set(names.flatMap((n) => Object.keys(result.per_operation[n]!.by_category)))];
  const diff = names.includes('claims') && names.includes('lean');
  const of = (n: string, c: string) => result.per_operation[n]!.by_category[c] ?? 0;
  if (diff) categories.sort((x, y) => (of('claims', y) - of('lean', y)) - (of('claims', x) - of('lean', x)));
  const row = (label: string, values: number[]) => `| ${label} | ${values.map((v) => v.toLocaleString('en-US')).join(' | ')} |`;
  return [
    `| instructions per operation | ${names.join(' | ')}${diff ? ' | claims − lean' : ''} |`,
    `|---|${names.map(() => '---|').join('')}${diff ? '---|' : ''}`,
    ...categories.map((c) => row(c, [...names.map((n) => of(n, c)), ...(diff ? [of('claims', c) - of('lean', c)] : [])])),
    row('**total**', [...names.map((n) => result.per_operation[n]!.instructions), ...(diff ? [result.per_operation.claims!.instructions - result.per_operation.lean!.instructions] : [])]),
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      claims: { type: 'string' }, warm: { type: 'string' }, only: { type: 'string', multiple: true },
      names: { type: 'boolean', default: false }, top: { type: 'string' }, keep: { type: 'string' }, json: { type: 'boolean', default: false },
    },
  });
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const log = (line: string) => process.stderr.write(line + '\n');
  const result = await benchClaimInstructions({ claims: number(values.claims), warm: number(values.warm), only: values.only, names: values.names, keep: values.keep, top: number(values.top) ?? 25, log });
  process.stdout.write(values.json ? JSON.stringify(result) + '\n' : instructionsTable(result).join('\n') + '\n');
}
