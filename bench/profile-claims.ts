// A CPU profile of `gatehouse serve` (SQLite) under the new-key claim (or replay) load, summarised
// by self time per area of the code and per function (profile-summary.ts): where a claim's
// microseconds go over HTTP; `--load cycles`, claim → sent → completed cycles (50 workers); `--load
// fingerprint`, `POST /v1/fingerprint` (the HTTP edge alone, no store work). With
// `--server lean`, the same load on the lean claim / lean replay / lean cycle (bench/lean-claim.ts),
// the floor: the two summaries side by side say what the product adds. The profile covers the
// whole process life (start-up is a few per cent of a 10-s run).
//
//   npm run build && node --import=tsx bench/profile-claims.ts [--seconds 10] [--top 40] [--load new-key|replays|cycles|fingerprint] [--server product|lean]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gatewayKeys, leanServerLoad, productLoad, SERVER_LOADS, startChild, withGatehouse, type Rate, type ServerLoad } from './http-claims.js';
import { summariseProfile, type CpuProfile } from './profile-summary.js';
import { compiledScript } from './compiled.js';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' }, top: { type: 'string', default: '40' },
    load: { type: 'string', default: 'new-key' }, server: { type: 'string', default: 'product' },
  },
});
const kind = values.load as ServerLoad;
if (!SERVER_LOADS.includes(kind) || !['product', 'lean'].includes(values.server!)) {
  throw new Error('--load is new-key, replays, cycles or fingerprint; --server is product or lean');
}
const seconds = Number(values.seconds);
const profiles: string[] = [];
const started = Date.now();
const rate = values.server === 'lean' ? await profileLean() : await withGatehouse({ kind: 'sqlite' }, 1, true, profiles, async ([server]) =>
  (await productLoad(kind, server!, await gatewayKeys(server!), seconds))());
console.log(values.load === 'cycles' ? `${values.server} cycles: ${rate.rps} cycles/s` : `${values.server} ${values.load}: ${rate.rps} req/s, p99 ${rate.p99_ms} ms`);
// The profile directory keeps earlier runs' profiles too.
for (const file of profiles.filter((f) => fs.statSync(f).mtimeMs >= started)) {
  const { functions, areas } = summariseProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, Number(values.top));
  console.log(`${file}\nby area:\n${areas}\n\nby function:\n${functions}`);
}

async function profileLean(): Promise<Rate> {
  // Its own directory, no name: under tsx, the loader's thread writes a profile too.
  const dir = path.join(BENCH, `results/profiles/lean-${values.load}-${Date.now()}`);
  const lean = await startChild('lean claim', ['--cpu-prof', `--cpu-prof-dir=${dir}`, compiledScript('bench/lean-claim.ts')], /listening on (http:\/\/\S+)/);
  try {
    return await (await leanServerLoad(kind, lean.url, seconds))();
  } finally {
    await lean.stop();
    // The main thread's is the one that ran the lean claim's code.
    const written = fs.readdirSync(dir).map((f) => path.join(dir, f));
    profiles.push(...written.filter((f) => fs.readFileSync(f, 'utf8').includes('lean-claims.ts')));
  }
}
