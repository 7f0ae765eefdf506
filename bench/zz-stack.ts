import path from 'node:path';
import { cpuPerAnswer } from './cpu-usage.js';
import { gatewayKeys, load, replayTarget, leanReplayTarget, startChild, withGatehouse } from './http-claims.js';
const lean = await startChild('lean', ['--import=tsx', path.join(import.meta.dirname, 'lean-claim.ts')], /listening on (http:\/\/\S+)/);
async function metrics(url: string, key: string) {
  const t = await (await fetch(url + '/metrics', { headers: { authorization: `Bearer ${key}` } })).text();
  const g = (n: string) => Number(new RegExp(`^${n}\\s+(\\S+)$`, 'm').exec(t)?.[1] ?? 0);
  return { units: g('gatehouse_store_batch_size_sum'), batches: g('gatehouse_store_batch_size_count'), secs: g('gatehouse_store_commit_seconds_sum') };
}
await withGatehouse({ kind: 'sqlite', bin: process.argv[2] }, 1, false, [], async ([server]) => {
  const keys = await gatewayKeys(server!);
  const replay = await replayTarget(server!, keys[0]!);
  const lr = await leanReplayTarget(lean.url);
  const m = async (name: string, pid: number, run: () => Promise<any>) => {
    const { result, server_cpu_us } = await cpuPerAnswer(pid, run, (r: any) => r.rps + r.non2xx);
    console.log(name.padEnd(14), Math.round(result.rps + result.non2xx), 'req/s', server_cpu_us, 'us');
  };
  for (let r = 0; r < 2; r++) {
    await m('lean replay', lean.pid, () => load({ ...lr, url: lean.url, connections: 50, seconds: 4 }));
    const a = await metrics(server!.url, server!.adminKey!);
    await m('replays', server!.pid, () => load({ ...replay, url: server!.url, connections: 50, seconds: 4 }));
    const b = await metrics(server!.url, server!.adminKey!);
    console.log('  units/batch', ((b.units - a.units) / (b.batches - a.batches)).toFixed(1), 'commit ms', ((b.secs - a.secs) * 1000 / (b.batches - a.batches)).toFixed(2));
  }
});
await lean.stop();
