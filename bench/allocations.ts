// Bytes allocated per request by `gatehouse serve` under the replay (or new-key claim) load, by
// the function that allocated them: V8's sampling heap profiler with the objects the garbage
// collector has since freed counted too (Node's --heap-prof counts only what is still alive).
// Unlike a rate on these shared 2-core machines, this barely moves between runs (±0.5 %), so it
// shows a change to what a request allocates that an A/B of its speed cannot resolve.
//
// Each tree's service runs in this process (its inspector is the one sampled), on a fresh SQLite
// store; the load is autocannon in a child process, so its own allocations are not counted.
// Trees are measured in turn, `--rounds` times each.
//
//   npm run build && node --import=tsx bench/allocations.ts [--a ../old/dist] [--b dist] [--load replays|new-key] [--seconds 6] [--rounds 2] [--top 30]
import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { AppContext } from '../src/context.js';
import type { RunningServer } from '../src/http/server.js';
import { createTestStore } from '../test/helpers/stores.js';
import { NEW_KEY_CLAIM_BODY, replayTarget } from './http-claims.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    a: { type: 'string' }, b: { type: 'string', default: 'dist' }, load: { type: 'string', default: 'replays' },
    seconds: { type: 'string', default: '6' }, rounds: { type: 'string', default: '2' }, top: { type: 'string', default: '30' },
  },
});
if (!['replays', 'new-key'].includes(values.load!)) throw new Error('--load is replays or new-key');
const seconds = Number(values.seconds);
const trees = values.a ? { A: values.a, B: values.b! } : { B: values.b! };

/** The load, run in a child process by autocannon() below. */
const LOAD_SCRIPT = `
import autocannon from 'autocannon';
const { url, method, headers, body, duration, newKeys } = JSON.parse(process.env.LOAD);
// Each new key's command differs in its title (http-claims.ts claimIntent): refuse a body that has no title to vary.
if (newKeys && !body.includes('bench ticket')) throw new Error('allocations: the new-key body has no "bench ticket" title to vary: ' + body);
let n = 0;
const run = String(Date.now());
const setupRequest = newKeys
  ? (req) => { const i = n++; return { ...req, headers: { ...req.headers, 'idempotency-key': 'alloc-' + run + '-' + i }, body: body.replace('bench ticket', 'bench ticket ' + i) }; }
  : undefined;
const result = await autocannon({ url, connections: 50, duration, requests: [setupRequest ? { method, headers, body, setupRequest } : { method, headers, body }] });
process.stdout.write(JSON.stringify({ ok: result['2xx'], other: result.non2xx + result.errors }));
`;

interface HeapNode { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: HeapNode[] }
interface Measured { requests: number; bytes: number; byFunction: Map<string, number> }

const results: Record<string, Measured[]> = {};
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, dist] of Object.entries(trees)) {
    const measured = await measureTree(path.resolve(ROOT, dist));
    (results[name] ??= []).push(measured);
    process.stderr.write(`[allocations] ${values.load} round ${round + 1} ${name}: ${perRequest(measured.bytes, measured.requests)} bytes per request (${measured.requests} requests)\n`);
  }
}
for (const [name, runs] of Object.entries(results)) {
  const best = runs[runs.length - 1]!;
  const rows = [...best.byFunction].sort((x, y) => y[1] - x[1]).slice(0, Number(values.top));
  console.log(`\n${name} (${trees[name as keyof typeof trees]}): ${runs.map((r) => perRequest(r.bytes, r.requests)).join(' / ')} bytes per request; by function, the last round:`);
  for (const [where, bytes] of rows) console.log(`${perRequest(bytes, best.requests).padStart(7)}  ${where}`);
}
process.exit(0);

async function measureTree(dist: string): Promise<Measured> {
  const { openContext } = await import(pathToFileURL(path.join(dist, 'src/context.js')).href) as { openContext: (config: unknown, options: object) => Promise<AppContext> };
  const { startServer } = await import(pathToFileURL(path.join(dist, 'src/http/server.js')).href) as { startServer: (context: AppContext, options: object) => Promise<RunningServer> };
  const { createFirstAdmin } = await import(pathToFileURL(path.join(dist, 'src/bootstrap.js')).href) as { createFirstAdmin: (context: AppContext) => Promise<string | null> };
  const store = await createTestStore('sqlite');
  const context = await openContext(store.config, {});
  const adminKey = (await createFirstAdmin(context))!;
  const server = await startServer(context, { host: '127.0.0.1', port: 0, maxBodyBytes: 1024 * 1024 });
  try {
    const key = (await context.principals.create({ account_id: 'acme', roles: ['gateway'] })).key;
    const target = values.load === 'replays'
      ? await replayTarget({ url: server.url, adminKey, pid: process.pid }, key)
      : { method: 'POST', path: '/v1/operations', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: NEW_KEY_CLAIM_BODY(0) };
    await autocannon(server.url, target, 1); // warm-up, not sampled
    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    // Node's types lack the two flags (V8 has had them since 11.x).
    await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as object);
    const requests = await autocannon(server.url, target, seconds);
    const { profile } = await session.post('HeapProfiler.stopSampling') as { profile: { head: HeapNode } };
    session.disconnect();
    const byFunction = new Map<string, number>();
    let bytes = 0;
    const walk = (node: HeapNode) => {
      bytes += node.selfSize;
      const { functionName, url, lineNumber } = node.callFrame;
      const where = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(dist\/src|src|node_modules)\//, '$1/')}:${lineNumber + 1}`;
      byFunction.set(where, (byFunction.get(where) ?? 0) + node.selfSize);
      node.children.forEach(walk);
    };
    walk(profile.head);
    return { requests, bytes, byFunction };
  } finally {
    await server.close();
    await context.close();
    await store.drop();
  }
}

/**
 * 2xx answers of an autocannon run at 50 connections, in a child process (its allocations are its
 * own); for new-key claims each request gets its own key and its own command. (Through autocannon's
 * CLI a body or header holding "[<id>]" does not survive: its argument parser reads brackets as
 * sub-arguments. The child runs its API instead.)
 */
async function autocannon(url: string, target: { method?: string; path: string; headers?: Record<string, string>; body?: unknown }, duration: number): Promise<number> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', LOAD_SCRIPT], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, LOAD: JSON.stringify({ url: url + target.path, method: target.method ?? 'POST', headers: target.headers ?? {}, body: String(target.body), duration, newKeys: values.load === 'new-key' }) },
  });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`allocations: the load exited with ${code}`))));
  });
  const result = JSON.parse(text) as { ok: number; other: number };
  if (result.other > 0) throw new Error(`allocations: ${result.other} answers were not 2xx`);
  return result.ok;
}

function perRequest(bytes: number, requests: number): string {
  return Math.round(bytes / requests).toLocaleString('en-US');
}
