// How long the lease sweeper holds the writer: claims whose 60-s leases then run out together (a
// gateway that died with them in flight), then one sweep, timed. Each sweep batch is one unit in
// the store's group commit (src/operations/sweeper.ts, SWEEP_BATCH leases per transaction), so
// its wall time is what claims queued behind it wait for. Printed per round: leases swept, the
// sweep's transactions (the last finds none left), wall time per full batch, the process's CPU
// per lease, and the first COMMITs' times (a COMMIT near 8 ms is SQLite checkpointing its WAL).
// In process, on a SQLite file with the product's durability, without the server (whose own
// sweeper, every second, would share the work); the clock is moved past the leases rather than
// waited for.
//
//   node --import=tsx bench/lease-sweep.ts [--leases 2500] [--rounds 3]
import { parseArgs } from 'node:util';
import { openContext } from '../src/context.js';
import { createTestStore } from '../test/helpers/stores.js';
import { SWEEP_BATCH } from '../src/operations/sweeper.js';

const { values } = parseArgs({ options: { leases: { type: 'string', default: '2500' }, rounds: { type: 'string', default: '3' } } });
const leases = Number(values.leases);
/** The claims' lease, given in each claim so that the clock's jump below is tied to it, not to the product's default. */
const LEASE_SECONDS = 60;
let offset = 0;
const testStore = await createTestStore('sqlite');
const context = await openContext(testStore.config, { clock: { now: () => Date.now() + offset } });
try {
  const principal = (await context.principals.authenticate((await context.principals.create({ account_id: 'acme', roles: ['gateway'] })).key))!;
  const commits: number[] = [];
  const store = context.store;
  const observer = store.onCommit;
  store.onCommit = (units, seconds) => {
    commits.push(seconds * 1000);
    observer?.(units, seconds);
  };
  for (let round = 0; round < Number(values.rounds); round++) {
    let next = 0;
    await Promise.all(Array.from({ length: 50 }, async () => {
      while (next < leases) {
        const key = `sweep-${round}-${next++}`;
        await context.operations.claim(principal, key, { method: 'POST', route: '/v1/tickets', command: { title: `Disk full on ${key}` }, lease_seconds: LEASE_SECONDS });
      }
    }));
    offset += (LEASE_SECONDS + 1) * 1000;
    commits.length = 0;
    const cpu = process.cpuUsage();
    const began = performance.now();
    const swept = await context.operations.sweepExpiredLeases();
    const wallMs = performance.now() - began;
    const { user, system } = process.cpuUsage(cpu);
    console.log(JSON.stringify({
      round, swept, transactions: commits.length, ms_per_full_batch: +(wallMs / (swept / SWEEP_BATCH)).toFixed(1),
      cpu_us_per_lease: +((user + system) / swept).toFixed(1), first_commits_ms: commits.slice(0, 3).map((ms) => +ms.toFixed(2)),
    }));
  }
} finally {
  await context.close();
  await testStore.drop();
}
