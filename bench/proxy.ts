// `gatehouse proxy` side by side with what it stands between (issue 14), in one run, every server a
// child process, autocannon with 50 connections on loopback:
//   - the upstream alone (examples/ticket-api.ts: one in-memory write per POST);
//   - the upstream behind `gatehouse proxy`: first writes (a new Idempotency-Key per request:
//     claim, sent, the upstream write, completed) and replays (one key again and again);
//   - Gatehouse's own rate for the same work, without the proxy: new-key claims and replays.
// The measurements run in interleaved rounds (the order turned each round) so machine noise hits
// all alike. Target: replays through the proxy ≥ 80 % of Gatehouse's own replay rate.
//
// With --profile the proxy runs under `node --cpu-prof` (slower: the rates are then not the run of
// record); its profile lands in bench/results/profiles.
//
//   node --import=tsx bench/proxy.ts [--seconds 10] [--profile]
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type autocannon from 'autocannon';
import { fullCycle, gatewayKeys, load, startChild, withGatehouse, type Rate } from './http-claims.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin/gatehouse.js');
const ROUNDS = 3;
const PROFILES = path.join(ROOT, 'bench/results/profiles');

export interface ProxyBenchResult {
  connections: number;
  rounds: number;
  upstream_alone: Rate;
  proxy_first_writes: Rate;
  proxy_replays: Rate;
  gatehouse_new_key_claims: Rate;
  gatehouse_replays: Rate;
  /** Latency the proxy adds, in ms: its answer against the upstream's own. */
  added_ms: { first_write_p50: number; first_write_p99: number; replay_p50: number; replay_p99: number };
  ratios: { proxy_replays_of_gatehouse_replays: number; proxy_first_writes_of_upstream: number; target_replays_met: boolean };
  /** The proxy's CPU profile, with --profile. */
  profile: string | null;
}

const TICKET = JSON.stringify({ title: 'bench ticket', amount_minor: 1000, currency: 'EUR' });

export async function benchProxy(options: { seconds: number; connections?: number; profile?: boolean; log?: (line: string) => void }): Promise<ProxyBenchResult> {
  const connections = options.connections ?? 50;
  const seconds = options.seconds;
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));
  return withGatehouse({ kind: 'sqlite' }, 1, false, [], async ([server]) => {
    const [gatewayKey] = await gatewayKeys(server!, 1);
    log('proxy: starting the upstream (examples/ticket-api.ts) and gatehouse proxy');
    const upstream = await startChild('upstream', ['--import=tsx', path.join(ROOT, 'examples/ticket-api.ts'), '--port', '0'], /listening on (http:\/\/\S+)/);
    const profile = options.profile ? path.join(PROFILES, `proxy-${Date.now()}.cpuprofile`) : null;
    const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${path.dirname(profile)}`, `--cpu-prof-name=${path.basename(profile)}`] : [];
    const proxy = await startChild('gatehouse proxy', [...nodeArgs, BIN, 'proxy', '--upstream', upstream.url, '--gatehouse', server!.url, '--port', '0'],
      /gatehouse proxy listening on (http:\/\/\S+)/, { GATEHOUSE_API_KEY: gatewayKey!, GATEHOUSE_LOG_LEVEL: 'silent' });
    try {
      const run = crypto.randomBytes(4).toString('hex');
      let n = 0;
      const newKey = (req: autocannon.Request): autocannon.Request => ({ ...req, headers: { ...req.headers, 'idempotency-key': `bench-proxy-${run}-${n++}` } });
      const json = { 'content-type': 'application/json' };

      // One finished write to replay through the proxy, and one finished operation to replay directly.
      const replayKey = `bench-proxy-replay-${run}`;
      const first = await fetch(`${proxy.url}/tickets`, { method: 'POST', headers: { ...json, 'idempotency-key': replayKey }, body: TICKET });
      await first.text();
      if (first.status !== 201) throw new Error(`proxy bench: the first write answered ${first.status}`);
      const claimBody = JSON.stringify({ method: 'POST', route: '/tickets', command: JSON.parse(TICKET) });
      const directReplayKey = `bench-direct-replay-${run}`;
      await fullCycle(server!.url, { authorization: `Bearer ${gatewayKey!}` }, directReplayKey, claimBody);
      const auth = { ...json, authorization: `Bearer ${gatewayKey}` };

      const measure: Record<string, () => Promise<Rate>> = {
        upstream_alone: () => load({ url: upstream.url, connections, seconds, method: 'POST', path: '/tickets', headers: json, body: TICKET }),
        proxy_first_writes: () => load({ url: proxy.url, connections, seconds, method: 'POST', path: '/tickets', headers: json, body: TICKET, setupRequest: newKey }),
        proxy_replays: () => load({ url: proxy.url, connections, seconds, method: 'POST', path: '/tickets', headers: { ...json, 'idempotency-key': replayKey }, body: TICKET }),
        gatehouse_new_key_claims: () => load({ url: server!.url, connections, seconds, method: 'POST', path: '/v1/operations', headers: auth, body: claimBody, setupRequest: newKey }),
        gatehouse_replays: () => load({ url: server!.url, connections, seconds, method: 'POST', path: '/v1/operations', headers: { ...auth, 'idempotency-key': directReplayKey }, body: claimBody }),
      };
      const names = Object.keys(measure);
      const samples: Record<string, Rate[]> = Object.fromEntries(names.map((name) => [name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? names : [...names].reverse();
        for (const name of order) {
          log(`proxy: round ${round + 1}/${ROUNDS}: ${name}`);
          samples[name]!.push(await measure[name]!());
        }
      }
      const mean = (name: string): Rate => {
        const rates = samples[name]!;
        const avg = (pick: (r: Rate) => number) => Math.round((rates.reduce((s, r) => s + pick(r), 0) / rates.length) * 10) / 10;
        return {
          rps: avg((r) => r.rps), p50_ms: avg((r) => r.p50_ms), p99_ms: avg((r) => r.p99_ms), max_ms: Math.max(...rates.map((r) => r.max_ms)),
          max_steady_ms: Math.max(...rates.map((r) => r.max_steady_ms)),
          non2xx: rates.reduce((s, r) => s + r.non2xx, 0), errors: rates.reduce((s, r) => s + r.errors, 0),
        };
      };
      const r = Object.fromEntries(names.map((name) => [name, mean(name)])) as Record<string, Rate>;
      const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
      const up = r.upstream_alone!;
      return {
        connections, rounds: ROUNDS,
        upstream_alone: up, proxy_first_writes: r.proxy_first_writes!, proxy_replays: r.proxy_replays!,
        gatehouse_new_key_claims: r.gatehouse_new_key_claims!, gatehouse_replays: r.gatehouse_replays!,
        added_ms: {
          first_write_p50: round1(r.proxy_first_writes!.p50_ms - up.p50_ms), first_write_p99: round1(r.proxy_first_writes!.p99_ms - up.p99_ms),
          replay_p50: round1(r.proxy_replays!.p50_ms - up.p50_ms), replay_p99: round1(r.proxy_replays!.p99_ms - up.p99_ms),
        },
        ratios: {
          proxy_replays_of_gatehouse_replays: ratio(r.proxy_replays!.rps, r.gatehouse_replays!.rps),
          proxy_first_writes_of_upstream: ratio(r.proxy_first_writes!.rps, up.rps),
          target_replays_met: r.proxy_replays!.rps >= 0.8 * r.gatehouse_replays!.rps,
        },
        profile,
      };
    } finally {
      await Promise.all([proxy.stop(), upstream.stop()]);
    }
  });
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** The section `npm run bench` prints. */
export function proxyMarkdown(p: ProxyBenchResult): string[] {
  const row = (what: string, r: Rate) => `| ${what} | ${r.rps} | ${r.p50_ms} | ${r.p99_ms} | ${r.max_ms} | ${r.non2xx + r.errors} |`;
  return [
    `### gatehouse proxy, autocannon, ${p.connections} connections, ${p.rounds} interleaved rounds`,
    '',
    '| what | req/s | p50 ms | p99 ms | max ms | non-2xx + errors |',
    '|---|---|---|---|---|---|',
    row('the upstream alone (one in-memory write per POST)', p.upstream_alone),
    row('the upstream behind the proxy: first writes (claim, sent, write, completed)', p.proxy_first_writes),
    row('the upstream behind the proxy: replays of one key', p.proxy_replays),
    row('Gatehouse alone: new-key claims', p.gatehouse_new_key_claims),
    row('Gatehouse alone: replays', p.gatehouse_replays),
    '',
    `Added by the proxy against the upstream alone: first write p50 +${p.added_ms.first_write_p50} ms, p99 +${p.added_ms.first_write_p99} ms; replay p50 +${p.added_ms.replay_p50} ms, p99 +${p.added_ms.replay_p99} ms.`,
    `Replays through the proxy are ${Math.round(p.ratios.proxy_replays_of_gatehouse_replays * 100)} % of Gatehouse's own replay rate (target ≥ 80 %: ${p.ratios.target_replays_met ? 'met' : 'NOT met'}); first writes through the proxy are ${Math.round(p.ratios.proxy_first_writes_of_upstream * 100)} % of the upstream's own rate.`,
    ...(p.profile ? ['', `CPU profile of the proxy (run under --cpu-prof, so the rates above are not comparable): ${path.relative(process.cwd(), p.profile)}`] : []),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' }, profile: { type: 'boolean', default: false } } });
  const result = await benchProxy({ seconds: Number(values.seconds), connections: Number(values.connections), profile: values.profile });
  process.stdout.write(proxyMarkdown(result).join('\n') + '\n' + JSON.stringify(result, null, 2) + '\n');
}
