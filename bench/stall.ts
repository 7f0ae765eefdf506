// Where does the slowest claim come from? New-key claims at 50 connections on a fresh `gatehouse
// serve` (SQLite) while a probe on its own connection asks for GET /v1/keys (no store, no auth)
// every 10 ms. Printed: the claims' rate and latency, the slowest claims with when they were
// answered (at the start, evenly spread, or in bursts), the probe's answers over 50 ms, and the
// service's own latency histogram for the claims (Koa's outermost middleware). A probe as slow as
// the slowest claim means the whole process stopped; a claim slow at the client but not in the
// service's histogram waited before Koa saw it.
//
//   node --import=tsx bench/stall.ts [--seconds 30] [--warm 0] [--idle 0]
//     --warm N: N seconds of the same load first (new connections); --idle N: then N seconds idle
import http from 'node:http';
import { parseArgs } from 'node:util';
import { gatewayKeys, newKeyLoad, withGatehouse } from './http-claims.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '30' }, warm: { type: 'string', default: '0' }, idle: { type: 'string', default: '0' } } });
const seconds = Number(values.seconds);

await withGatehouse({ kind: 'sqlite' }, 1, false, [], async ([server]) => {
  const keys = await gatewayKeys(server!);
  if (Number(values.warm) > 0) await newKeyLoad([server!], keys, 50, Number(values.warm));
  await new Promise((r) => setTimeout(r, Number(values.idle) * 1000));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const began = performance.now();
  const spikes: Array<{ at_s: number; ms: number }> = [];
  let probes = 0;
  let stop = false;
  const probe = (async () => {
    while (!stop) {
      const t = performance.now();
      await new Promise<void>((resolve, reject) => {
        http.get(`${server!.url}/v1/keys`, { agent }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject);
      });
      const ms = performance.now() - t;
      probes++;
      if (ms > 50) spikes.push({ at_s: Math.round((t - began) / 100) / 10, ms: Math.round(ms) });
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const slow: Array<{ answered_at_s: number; ms: number }> = [];
  const loadBegan = performance.now();
  const claims = await newKeyLoad([server!], keys, 50, seconds, 'any', (ms) => {
    if (ms > 100) slow.push({ answered_at_s: Math.round((performance.now() - loadBegan) / 100) / 10, ms: Math.round(ms) });
  });
  stop = true;
  await probe;
  agent.destroy();
  // The server's own view of the same requests (the latency the outermost middleware records, src/http/error-middleware.ts): a claim slow
  // here waited inside the service; one slow only at the client waited before Koa saw it.
  const metrics = await (await fetch(`${server!.url}/metrics`, { headers: { authorization: `Bearer ${server!.adminKey}` } })).text();
  const serverBuckets = metrics.split('\n').filter((line) => line.includes('request_duration_seconds_bucket') && line.includes('POST') && line.includes('route="/v1/operations"'));
  console.log(JSON.stringify({
    claims,
    claims_over_100ms: slow.length, slowest: slow.sort((a, b) => b.ms - a.ms).slice(0, 15),
    probes, probe_spikes_over_50ms: spikes, server_buckets: serverBuckets,
  }));
});
