// Self time of a V8 CPU profile (.cpuprofile), by function and by area of the code: where the
// microseconds of a request go. Used by bench/profile-claims.ts; also on its own:
//
//   npx tsx bench/profile-summary.ts FILE.cpuprofile [--top 40]
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame { functionName: string; url: string; lineNumber: number }
export interface CpuProfile { nodes: Array<{ id: number; callFrame: CallFrame }>; samples: number[]; timeDeltas: number[] }

/** The area a sampled function belongs to, by its file (native better-sqlite3 calls have none). */
const AREAS: Array<[string, (frame: CallFrame) => boolean]> = [
  ['SQLite (better-sqlite3 statements, COMMIT and its fsync)', (f) => f.url === '' && ['run', 'get', 'all', 'iterate', 'exec'].includes(f.functionName)],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['idle', (f) => f.functionName === '(idle)'],
  ['V8 and native, unattributed', (f) => f.url === ''],
  ['Kysely', (f) => f.url.includes('/kysely/')],
  ['better-sqlite3 JS', (f) => f.url.includes('/better-sqlite3/')],
  ['Koa and its router', (f) => /\/(koa|@koa|koa-compose|delegates|statuses|http-errors|path-to-regexp|content-type|type-is|accepts|negotiator|vary|on-finished|cookies)\//.test(f.url)],
  ['libsodium (sealing)', (f) => f.url.includes('libsodium')],
  ['prom-client (metrics)', (f) => f.url.includes('prom-client')],
  ['pino (logging)', (f) => f.url.includes('/pino')],
  ['ajv (request schemas)', (f) => f.url.includes('/ajv')],
  ['src/http (middleware, routes)', (f) => f.url.includes('/http/')],
  ['src/operations', (f) => f.url.includes('/operations/')],
  ['src/ledger', (f) => f.url.includes('/ledger/')],
  ['src/core (hashing, JCS, strict JSON, ids)', (f) => f.url.includes('/core/')],
  ['src/store', (f) => f.url.includes('/store/')],
  ['src (other)', (f) => /\/(src|dist)\//.test(f.url)],
  ['Node.js (net, http, streams, crypto, timers)', (f) => f.url.startsWith('node:')],
  ['other', () => true],
];

export function summariseProfile(profile: CpuProfile, top: number): { functions: string; areas: string } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id)!;
    const delta = profile.timeDeltas[i] ?? 0;
    const key = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + delta);
    const area = AREAS.find(([, matches]) => matches(frame))![0];
    byArea.set(area, (byArea.get(area) ?? 0) + delta);
    total += delta;
  });
  const table = (shares: Map<string, number>, rows: number) => [...shares].sort((a, b) => b[1] - a[1]).slice(0, rows)
    .map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`).join('\n');
  return { functions: table(byFunction, top), areas: table(byArea, AREAS.length) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' } } });
  for (const file of positionals) {
    const { functions, areas } = summariseProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, Number(values.top));
    console.log(`${file}\nby area:\n${areas}\n\nby function:\n${functions}`);
  }
}
