// What the garbage collector does in `gatehouse serve` (or the lean claim's server) under a load:
// young-generation GCs (scavenges) and full ones, their pauses, and the bytes promoted to the old
// generation, per request, from V8's own trace (`--trace-gc-nvp`). Requests that die young cost
// a scavenge little; objects that live through two scavenges are copied twice and promoted, and
// that is what makes GC expensive. Unlike a rate, bytes promoted per request barely move with the
// machine's noise, so this shows a change in what a request keeps alive (the twenty-eighth
// session found a Set that kept every request through its scavenges: 158 MB promoted in 6 s of
// replays against the lean replay's 4.7 MB; BENCHMARKS.md).
//
//   npm run build && node --import=tsx bench/gc-trace.ts [--load replays|new-key|cycles|fingerprint] [--server product|lean] [--seconds 6] [--node-args='--max-semi-space-size=16'] [--bin ../old/bin/gatehouse.js]
//
// --server lean runs the lean claim's server (bench/lean-claim.ts) under the same load: its
// floor. --node-args adds Node flags to the server (after the ones `npm start` gives it); --bin
// runs another checkout's `gatehouse serve` (built), for before and after.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gatewayKeys, leanServerLoad, productLoad, SERVER_LOADS, startChild, type Child, type ServerLoad } from './http-claims.js';
import { compiledScript } from './compiled.js';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    load: { type: 'string', default: 'replays' }, server: { type: 'string', default: 'product' },
    seconds: { type: 'string', default: '6' }, 'node-args': { type: 'string', default: '' },
    bin: { type: 'string', default: path.join(BENCH, '../bin/gatehouse.js') },
  },
});
const kind = values.load as ServerLoad;
if (!SERVER_LOADS.includes(kind) || !['product', 'lean'].includes(values.server!)) {
  throw new Error(`--load is one of ${SERVER_LOADS.join(', ')}; --server is product or lean`);
}
const seconds = Number(values.seconds);
if (!(seconds > 0)) throw new Error('--seconds must be a positive number');
const nodeArgs = ['--trace-gc-nvp', ...values['node-args']!.split(' ').filter((a) => a !== '')];

interface GcTotals { count: number; pauseMs: number; promotedBytes: number; allocatedBytes: number }

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-gc-'));
let child: Child | null = null;
let trace = '';
try {
  child = values.server === 'lean'
    ? await startChild('lean claim', [...nodeArgs, compiledScript('bench/lean-claim.ts')], /listening on (http:\/\/\S+)/)
    : await startChild('gatehouse serve', [...nodeArgs, path.resolve(values.bin!), 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], /gatehouse listening on (http:\/\/\S+)/);
  const running = child;
  // Set-up (keys, the operation replayed) is not counted: the trace is read from here on.
  const measure = values.server === 'lean'
    ? await leanServerLoad(kind, running.url, seconds)
    : await productLoad(kind, running, await gatewayKeys(running), seconds);
  running.process.stdout!.on('data', (d: Buffer) => (trace += d.toString()));
  const rate = await measure();
  await running.stop();
  const answered = rate.rps * seconds;
  const scavenges = totals(trace, 's');
  const full = totals(trace, 'mc');
  const per = (n: number) => (n / answered);
  const unit = kind === 'cycles' ? 'cycle' : 'request';
  console.log(`${values.server} ${kind}: ${rate.rps} ${unit}s/s over ${seconds} s`);
  console.log(`scavenges: ${scavenges.count}, ${scavenges.pauseMs.toFixed(0)} ms of pause (${(per(scavenges.pauseMs) * 1000).toFixed(2)} µs per ${unit}), ` +
    `${(scavenges.promotedBytes / 1e6).toFixed(1)} MB promoted (${per(scavenges.promotedBytes).toFixed(0)} bytes per ${unit}), ${(scavenges.allocatedBytes / 1e6).toFixed(0)} MB allocated`);
  console.log(`full GCs: ${full.count}, ${full.pauseMs.toFixed(0)} ms of pause`);
} finally {
  await child?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

/** Sums the trace's lines of one kind of GC (`gc=s`, a scavenge; `gc=mc`, a full mark-compact). */
function totals(text: string, gc: 's' | 'mc'): GcTotals {
  const sum: GcTotals = { count: 0, pauseMs: 0, promotedBytes: 0, allocatedBytes: 0 };
  for (const line of text.split('\n')) {
    if (!line.includes(` gc=${gc} `)) continue;
    const field = (name: string) => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    sum.count++;
    sum.pauseMs += field('pause');
    sum.promotedBytes += field('promoted');
    sum.allocatedBytes += field('allocated');
  }
  return sum;
}
