// A CPU profile of `gatehouse serve` (SQLite) under the new-key claim load, summarised by self
// time per function: where a claim's microseconds go over HTTP. The profile covers the whole
// process life (start-up is a few per cent of a 10-s run).
//
//   npm run build && node --import=tsx bench/profile-claims.ts [--seconds 10] [--top 40] [--load new-key|replays]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { gatewayKeys, load, newKeyLoad, replayTarget, withGatehouse } from './http-claims.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, top: { type: 'string', default: '40' }, load: { type: 'string', default: 'new-key' } } });
const profiles: string[] = [];
const rate = await withGatehouse({ kind: 'sqlite' }, 1, true, profiles, async ([server]) => {
  const keys = await gatewayKeys(server!);
  if (values.load === 'replays') {
    const replay = await replayTarget(server!, keys[0]!);
    return load({ ...replay, url: server!.url, connections: 50, seconds: Number(values.seconds) });
  }
  return newKeyLoad([server!], keys, 50, Number(values.seconds));
});
console.log(`${values.load}: ${rate.rps} req/s, p99 ${rate.p99_ms} ms`);
for (const file of profiles) console.log(`${file}\n${summarise(JSON.parse(fs.readFileSync(file, 'utf8')), Number(values.top))}`);

interface Profile { nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>; samples: number[]; timeDeltas: number[] }

/** Self time per function (name, file, line), the largest first, as shares of all samples. */
function summarise(profile: Profile, top: number): string {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    const delta = profile.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + delta);
    total += delta;
  });
  return [...self].sort((a, b) => b[1] - a[1]).slice(0, top).map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`).join('\n');
}
