// A CPU profile of `gatehouse serve` (SQLite) under the new-key claim (or replay) load, summarised
// by self time per area of the code and per function (profile-summary.ts): where a claim's
// microseconds go over HTTP. The profile covers the whole
// process life (start-up is a few per cent of a 10-s run).
//
//   npm run build && node --import=tsx bench/profile-claims.ts [--seconds 10] [--top 40] [--load new-key|replays]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { gatewayKeys, load, newKeyLoad, replayTarget, withGatehouse } from './http-claims.js';
import { summariseProfile, type CpuProfile } from './profile-summary.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, top: { type: 'string', default: '40' }, load: { type: 'string', default: 'new-key' } } });
const profiles: string[] = [];
const started = Date.now();
const rate = await withGatehouse({ kind: 'sqlite' }, 1, true, profiles, async ([server]) => {
  const keys = await gatewayKeys(server!);
  if (values.load === 'replays') {
    const replay = await replayTarget(server!, keys[0]!);
    return load({ ...replay, url: server!.url, connections: 50, seconds: Number(values.seconds) });
  }
  return newKeyLoad([server!], keys, 50, Number(values.seconds));
});
console.log(`${values.load}: ${rate.rps} req/s, p99 ${rate.p99_ms} ms`);
// The profile directory keeps earlier runs' profiles too.
for (const file of profiles.filter((f) => fs.statSync(f).mtimeMs >= started)) {
  const { functions, areas } = summariseProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, Number(values.top));
  console.log(`${file}\nby area:\n${areas}\n\nby function:\n${functions}`);
}
