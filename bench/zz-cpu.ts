import path from 'node:path';
import { sampleCpu } from './cpu-usage.js';
import { durableLoad, gatewayKeys, newKeyLoad, startChild, withGatehouse } from './http-claims.js';
const lean = await startChild('lean claim', ['--import=tsx', path.resolve('bench/lean-claim.ts')], /listening on (http:\/\/\S+)/);
const durable = await startChild('durable koa', ['--import=tsx', path.resolve('bench/durable-koa.ts')], /listening on (http:\/\/\S+)/);
try {
  await withGatehouse({ kind: 'sqlite' }, 1, false, [], async ([server]) => {
    const keys = await gatewayKeys(server!);
    const measure = async (name: string, pid: number, run: () => Promise<{ rps: number }>) => {
      const before = sampleCpu({ s: [pid] })!;
      const t = performance.now();
      const rate = await run();
      const after = sampleCpu({ s: [pid] })!;
      const requests = rate.rps * (performance.now() - t) / 1000;
      console.log(`${name.padEnd(12)} ${Math.round(rate.rps)} req/s, server CPU ${Math.round((after.groups.s! - before.groups.s!) * 10_000 / requests)} us per request`);
    };
    for (let r = 0; r < 3; r++) {
      await measure('durable koa', durable.pid, () => durableLoad(durable.url, 50, 6));
      await measure('lean claim', lean.pid, () => durableLoad(lean.url, 50, 6, '/v1/operations'));
      await measure('product', server!.pid, () => newKeyLoad([server!], keys, 50, 6));
    }
  });
} finally {
  await Promise.all([lean.stop(), durable.stop()]);
}
