import test from 'ava';
import http from 'node:http';
import { spawnGatehouse, tempDir } from '../helpers/server-process.js';

/**
 * A flood of large claims from one client past the bound on work in flight. The issue asks for
 * the other client's claim within 1 s; on an idle machine it takes tens of milliseconds (the
 * log line shows it). The asserted bounds are doubled and more, because this test shares two
 * cores with other suites and the flood's sender runs on them too: shed answers under 2 s at
 * the median and 5 s at worst (the deadline is 10 s), the other client's claims served (201)
 * under 2 s at the median and 5 s at worst.
 *
 * Each flood request sends its body in two parts 200 ms apart, so it holds its slot for at least
 * that long: with 16 senders and a bound of 4 per client the flood is past the bound on any
 * machine. (Sent in one write, on a CI machine the server finished each claim before the next
 * arrived, the flood never held 4 slots at once, and nothing was shed.)
 */
function post(url: string, key: string, idem: string, body: string, holdMs = 0): Promise<{ status: number; ms: number; code?: string; retryAfter?: string }> {
  const started = performance.now();
  const target = new URL('/v1/operations', url);
  return new Promise((resolve) => {
    const req = http.request({
      host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent: false,
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let code: string | undefined;
        try {
          code = JSON.parse(text)?.error?.code;
        } catch {
          code = undefined;
        }
        resolve({ status: res.statusCode!, ms: performance.now() - started, code, retryAfter: res.headers['retry-after'] as string | undefined });
      });
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    if (holdMs === 0) {
      req.end(body);
      return;
    }
    // The first 64 KiB now, the rest after holdMs: the request is in flight at the server
    // (admitted on its headers) for at least that long, however fast this machine is.
    req.write(body.slice(0, 64 * 1024));
    setTimeout(() => req.end(body.slice(64 * 1024)), holdMs);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

test('[sqlite] a flood of 700 KB claims past the bound is answered 503 overloaded fast, and another client\'s claim is served meanwhile (1 s measured, 2 s asserted)', async (t) => {
  t.timeout(180_000);
  const { dir, cleanup } = tempDir();
  t.teardown(cleanup);
  const server = await spawnGatehouse({ args: ['--data-dir', dir, '--max-in-flight', '16', '--max-in-flight-per-client', '4'] });
  t.teardown(() => server.stop());
  const keyOf = async (account: string) => {
    const r = await fetch(`${server.url}/v1/principals`, {
      method: 'POST', headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: account, roles: ['gateway'] }),
    });
    return ((await r.json()) as { key: string }).key;
  };
  const flooder = await keyOf('flood');
  const normal = await keyOf('acme');
  const bigClaim = JSON.stringify({ method: 'POST', route: '/blobs', command: { blob: 'x'.repeat(700 * 1024) } });

  let stop = false;
  const flood: Array<{ status: number; ms: number; code?: string; retryAfter?: string }> = [];
  const floodLoops = Array.from({ length: 16 }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      flood.push(await post(server.url, flooder, `f-${w}-${i}`, bigClaim, 200));
    }
  });
  await new Promise((r) => setTimeout(r, 1500));
  const normalTimes: number[] = [];
  for (let i = 0; i < 8; i++) {
    const answer = await post(server.url, normal, `n-${i}`, JSON.stringify({ method: 'POST', route: '/tickets', command: { n: i } }));
    t.is(answer.status, 201, `normal claim ${i}: ${answer.status} ${answer.code}`);
    normalTimes.push(answer.ms);
    await new Promise((r) => setTimeout(r, 250));
  }
  stop = true;
  await Promise.all(floodLoops);

  const shed = flood.filter((a) => a.status === 503);
  t.true(shed.length > 0, `the flood was shed (${flood.length} requests)`);
  t.true(shed.every((a) => a.code === 'overloaded' && a.retryAfter !== undefined), 'every shed answer is 503 overloaded with Retry-After');
  t.true(flood.every((a) => a.status === 201 || a.status === 503), `the flood met only 201 or 503: ${[...new Set(flood.map((a) => a.status))]}`);
  t.true(median(shed.map((a) => a.ms)) < 2000, `shed answers: median ${median(shed.map((a) => a.ms)).toFixed(0)} ms`);
  t.true(Math.max(...shed.map((a) => a.ms)) < 5000, `shed answers: slowest ${Math.max(...shed.map((a) => a.ms)).toFixed(0)} ms`);
  t.true(median(normalTimes) < 2000, `normal claims: median ${median(normalTimes).toFixed(0)} ms`);
  t.true(Math.max(...normalTimes) < 5000, `normal claims: slowest ${Math.max(...normalTimes).toFixed(0)} ms`);
  t.log(`flood: ${flood.length} requests, ${shed.length} shed (median ${median(shed.map((a) => a.ms)).toFixed(0)} ms); normal claims: ${normalTimes.map((m) => m.toFixed(0)).join(', ')} ms`);
  t.true(server.process.alive);
});
