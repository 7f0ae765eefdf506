/**
 * Ledger append throughput without HTTP, durable: SQLite with synchronous=FULL through
 * store.transact (a unit is acknowledged only after its batch's COMMIT returned), each event
 * with a sealed payload, through the product's own Ledger.append.
 *
 *   npx tsx bench/append.ts
 *
 * - batch 1: one event per transact unit, awaited one after another (one COMMIT each);
 * - batch 100, concurrent: 100 transact units in flight at once, so the group commit carries
 *   them in one BEGIN IMMEDIATE … COMMIT (one fsync), each in its own SAVEPOINT;
 * - batch 100, one unit: 100 appends inside a single transact unit.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readConfig } from '../src/config/config.js';
import { createKeyFiles } from '../src/config/key-files.js';
import { openContext, type AppContext } from '../src/context.js';

export interface AppendBenchResult {
  batch1EventsPerSecond: number;
  batch100ConcurrentEventsPerSecond: number;
  batch100OneUnitEventsPerSecond: number;
  events: { batch1: number; batch100Concurrent: number; batch100OneUnit: number };
  store: 'sqlite (WAL, synchronous=FULL)';
}

function appendOne(context: AppContext, i: number) {
  return (trx: Parameters<Parameters<AppContext['store']['transact']>[0]>[0]) => context.ledger.append(trx, {
    account_id: 'acme', type: 'attempted', actor: 'prn_bench', operation_id: `op_${i}`, idempotency_key: `key-${i}`,
    fingerprint: 'ab'.repeat(32), method: 'POST', route: '/v1/refunds', state: 'running',
    payload: { amount: 1000 + (i % 9000), currency: 'EUR', order_id: `ord_${i}` },
  });
}

async function timed(run: () => Promise<number>): Promise<number> {
  const t0 = process.hrtime.bigint();
  const events = await run();
  return events / (Number(process.hrtime.bigint() - t0) / 1e9);
}

export async function benchAppend(options: { batch1Events?: number; batch100Rounds?: number } = {}): Promise<AppendBenchResult> {
  const batch1 = options.batch1Events ?? 2000;
  const rounds = options.batch100Rounds ?? 50;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-append-'));
  createKeyFiles(dataDir);
  const context = await openContext(readConfig({ dataDir }, {}));
  let n = 0;
  try {
    await context.store.transact(appendOne(context, n++)); // the account, its data key and chain head exist from here on
    const one = await timed(async () => {
      for (let i = 0; i < batch1; i++) await context.store.transact(appendOne(context, n++));
      return batch1;
    });
    const concurrent = await timed(async () => {
      for (let r = 0; r < rounds; r++) {
        await Promise.all(Array.from({ length: 100 }, () => context.store.transact(appendOne(context, n++))));
      }
      return rounds * 100;
    });
    const oneUnit = await timed(async () => {
      for (let r = 0; r < rounds; r++) {
        await context.store.transact(async (trx) => {
          for (let i = 0; i < 100; i++) await appendOne(context, n++)(trx);
        });
      }
      return rounds * 100;
    });
    return {
      batch1EventsPerSecond: one,
      batch100ConcurrentEventsPerSecond: concurrent,
      batch100OneUnitEventsPerSecond: oneUnit,
      events: { batch1, batch100Concurrent: rounds * 100, batch100OneUnit: rounds * 100 },
      store: 'sqlite (WAL, synchronous=FULL)',
    };
  } finally {
    await context.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchAppend(), null, 2));
}
