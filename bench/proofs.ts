/**
 * Proofs on a large account (target: 1,000,000 events, an inclusion or consistency proof in
 * ≤ 20 ms p99 on SQLite), straight on the store as the routes call it, and claims with a
 * witness that is down (a dead witness must not slow claims: compare with no witness).
 *
 *   node --import=tsx bench/run.ts --only proofs [--quick]
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { openContext } from '../src/context.js';
import { readConfig } from '../src/config/config.js';
import { generateSeed, signingKeyFromSeed } from '../src/core/signing-key.js';
import { cosignerKey } from '../src/core/cosignature.js';
import { consistencyProofOf, inclusionProofOf } from '../src/ledger/proofs.js';
import { gatewayKeys, newKeyLoad, withGatehouse } from './http-claims.js';
import { ledgerFixture } from './ledger-fixture.js';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

async function timeProofs(events: number, samples: number) {
  const fixture = await ledgerFixture(events);
  const context = await openContext(readConfig({ dataDir: fixture.dataDir, db: path.join(fixture.dataDir, 'gatehouse.db') }));
  try {
    const db = context.store.db;
    const rand = (n: number) => 1 + crypto.randomInt(n);
    const measure = async (one: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < samples; i++) {
        const start = process.hrtime.bigint();
        await one();
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      times.sort((a, b) => a - b);
      return { samples, p50_ms: +percentile(times, 0.5).toFixed(3), p99_ms: +percentile(times, 0.99).toFixed(3), max_ms: +times.at(-1)!.toFixed(3) };
    };
    const inclusion = await measure(() => {
      const size = rand(events);
      return inclusionProofOf(db, fixture.accountId, rand(size), size);
    });
    const consistency = await measure(() => {
      const to = rand(events);
      return consistencyProofOf(db, fixture.accountId, rand(to), to);
    });
    return { events, inclusion, consistency };
  } finally {
    await context.close();
  }
}

/** Claims per second with no witness and with one that is down (nothing listens at its URL). */
async function claimsWithDeadWitness(seconds: number) {
  const dead = cosignerKey('dead.example/witness', signingKeyFromSeed(generateSeed(), 'dead.example/witness').publicKey);
  const run = (serveArgs: string[]) => withGatehouse({ kind: 'sqlite', serveArgs }, 1, false, [], async ([server]) => {
    const keys = await gatewayKeys(server!, 4);
    return newKeyLoad([server!], keys, 16, seconds);
  });
  const without = await run([]);
  const withDead = await run(['--witness', `http://127.0.0.1:9=${dead.text}`]);
  return { no_witness: without, dead_witness: withDead };
}

export async function benchProofs(options: { quick?: boolean; seconds?: number }) {
  const events = options.quick ? 100_000 : 1_000_000;
  return {
    proofs: await timeProofs(events, options.quick ? 300 : 2000),
    claims: await claimsWithDeadWitness(options.seconds ?? 10),
  };
}
