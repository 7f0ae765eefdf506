// Where does the slowest claim come from? New-key claims at 50 connections on a fresh `gatehouse
// serve` (SQLite) while a probe on its own connection asks for GET /v1/keys (no store, no
// auth) every 10 ms. A probe answer as slow as the slowest claim means the whole process
// stopped (the event loop blocked: a long unit, a long COMMIT, GC); a fast probe while a claim
// waited means the claim queued behind other work. The server runs with --trace-gc-nvp off and
// `--cpu-prof` optional; the probe's spikes are printed with their time since the start, so they
// can be laid against the server's own log.
//
//   node --import=tsx bench/stall.ts [--seconds 30] [--lease-seconds 5]
import http from 'node:http';
import { parseArgs } from 'node:util';
import crypto from 'node:crypto';
import { CLAIM_BODY, gatewayKeys, newKeyLoad, runAutocannon, withGatehouse } from './http-claims.js';

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
  // The slowest claims, each with when it was answered: at the start (new connections, cold
  // code), evenly spread, or in bursts.
  const run = crypto.randomBytes(4).toString('hex');
  let n = 0;
  const slow: Array<{ answered_at_s: number; ms: number }> = [];
  const loadBegan = performance.now();
  const result = await runAutocannon({
    url: server!.url, connections: 50, duration: seconds,
    requests: [{ method: 'POST', path: '/v1/operations', headers: { 'content-type': 'application/json' }, setupRequest: (req) => {
      const i = n++;
      return { ...req, headers: { ...req.headers, authorization: `Bearer ${keys[i % keys.length]}`, 'idempotency-key': `stall-${run}-${i}` }, body: CLAIM_BODY(i) };
    } }],
  }, (ms) => {
    if (ms > 100) slow.push({ answered_at_s: Math.round((performance.now() - loadBegan) / 100) / 10, ms: Math.round(ms) });
  });
  stop = true;
  await probe;
  agent.destroy();
  // The server's own view of the same requests (requestTiming, outermost middleware): a claim slow
  // here waited inside the service; one slow only at the client waited before Koa saw it.
  const metrics = await (await fetch(`${server!.url}/metrics`, { headers: { authorization: `Bearer ${server!.adminKey}` } })).text();
  const serverBuckets = metrics.split('\n').filter((line) => line.includes('request_duration_seconds_bucket') && line.includes('POST') && line.includes('route="/v1/operations"'));
  const l = result.latency as unknown as Record<string, number>;
  console.log(JSON.stringify({
    claims_per_s: Math.round(result.requests.average), p50: l.p50, p99: l.p99, p99_9: l.p99_9, max: l.max, non2xx: result.non2xx,
    claims_over_100ms: slow.length, slowest: slow.sort((a, b) => b.ms - a.ms).slice(0, 15),
    probes, probe_spikes_over_50ms: spikes, server_buckets: serverBuckets,
  }));
});
