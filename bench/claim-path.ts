// The claim path without HTTP: CPU microseconds per new-key claim through the real
// Operations domain on a durable SQLite store (group commit), 50 claims in flight.
// It isolates the ledger and store cost from Koa's, so a change to either shows here.
import { startTestApp } from '../test/helpers/app.js';

export async function benchClaimPath(options: { quick?: boolean } = {}): Promise<{ claims: number; claims_per_sec: number; cpu_us_per_claim: number }> {
  const app = await startTestApp(null, 'sqlite');
  try {
    const principal = (await app.context.principals.authenticate(await app.keyFor('acme', 'gateway')))!;
    // A new key names a new intended write, so each carries its own command (as in http-claims):
    // one command for every key would make each claim a repeat for the duplicates report.
    const bodyFor = (key: string) => ({ method: 'POST', route: '/v1/tickets', command: { title: `Disk full on ${key}`, priority: 2, tags: ['pager', 'db'] } });
    const claims = options.quick ? 2000 : 10_000;
    const run = async (count: number, prefix: string) => {
      let next = 0;
      await Promise.all(Array.from({ length: 50 }, async () => {
        while (next < count) {
          const key = `${prefix}-${next++}`;
          await app.context.operations.claim(principal, key, bodyFor(key));
        }
      }));
    };
    await run(500, 'warm');
    const cpu = process.cpuUsage();
    const began = performance.now();
    await run(claims, 'bench');
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - began) / 1000;
    return { claims, claims_per_sec: Math.round(claims / seconds), cpu_us_per_claim: Math.round((used.user + used.system) / claims) };
  } finally {
    await app.close();
  }
}
