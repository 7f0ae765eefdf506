// The server's own CPU per request (from /proc) for durable Koa, the lean claim and the product's
// new-key claims, the lean replay and the product's replays, and per claim → sent → completed cycle
// for the lean server and the product, measured in turns under the same load (50 connections or
// workers): what each answer costs the process that gives it, which the req/s of a shared 2-core
// machine hides. Answers where the product spends beyond the floor of its design. First, the HTTP
// edge alone: `POST /v1/fingerprint` on the lean server (the body read and parsed strictly, the
// fingerprint computed) and on the product (the same behind admission, authentication, routing,
// validation, the policy, metrics): what every request pays before any store work.
//
//   npm run build && node --import=tsx bench/server-cpu.ts [--seconds 6] [--rounds 3]
import { parseArgs } from 'node:util';
import { cpuPerAnswer } from './cpu-usage.js';
import { compiledScript } from './compiled.js';
import {
  cycleLoad, cyclesAsRate, durableLoad, fingerprintTarget, gatewayKeys, leanAccount, leanCycleLoad, leanLoad, leanReplayTarget, load, newKeyLoad, replayTarget, startChild, withGatehouse,
} from './http-claims.js';
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '6' }, rounds: { type: 'string', default: '3' } } });
const seconds = Number(values.seconds);
const lean = await startChild('lean claim', [compiledScript('bench/lean-claim.ts')], /listening on (http:\/\/\S+)/);
const durable = await startChild('durable koa', [compiledScript('bench/durable-koa.ts')], /listening on (http:\/\/\S+)/);
try {
  await withGatehouse({ kind: 'sqlite' }, 1, false, [], async ([server]) => {
    const keys = await gatewayKeys(server!);
    const replay = await replayTarget(server!, keys[0]!);
    const leanReplay = await leanReplayTarget(lean.url);
    const measure = async (name: string, pid: number, run: () => Promise<{ rps: number }>, unit = 'request') => {
      const { result, server_cpu_us } = await cpuPerAnswer(pid, run, (rate) => rate.rps);
      console.log(`${name.padEnd(12)} ${Math.round(result.rps)} ${unit}s/s, server CPU ${server_cpu_us} us per ${unit}`);
    };
    for (let r = 0; r < Number(values.rounds); r++) {
      await measure('lean edge', lean.pid, () => load({ ...fingerprintTarget(leanAccount(0)), url: lean.url, connections: 50, seconds }));
      await measure('edge', server!.pid, () => load({ ...fingerprintTarget({ authorization: `Bearer ${keys[0]!}` }), url: server!.url, connections: 50, seconds }));
      await measure('durable koa', durable.pid, () => durableLoad(durable.url, 50, seconds));
      await measure('lean claim', lean.pid, () => leanLoad(lean.url, 50, seconds));
      await measure('product', server!.pid, () => newKeyLoad([server!], keys, 50, seconds));
      await measure('lean replay', lean.pid, () => load({ ...leanReplay, url: lean.url, connections: 50, seconds }));
      await measure('replays', server!.pid, () => load({ ...replay, url: server!.url, connections: 50, seconds }));
      await measure('lean cycles', lean.pid, async () => cyclesAsRate(await leanCycleLoad(lean.url, 50, seconds)), 'cycle');
      await measure('cycles', server!.pid, async () => cyclesAsRate(await cycleLoad(server!, keys, 50, seconds)), 'cycle');
    }
  });
} finally {
  await Promise.all([lean.stop(), durable.stop()]);
}
