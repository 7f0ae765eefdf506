// The client's own cost per execute(), durable key store included, against a bare claim + sent +
// completed over HTTP, in the same run against the same server. Target: under 15 % extra.
//
//   node --import=tsx bench/client-overhead.ts --url http://127.0.0.1:8080 --key gh_… [--seconds 10]
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Executor, GatehouseClient, SqliteKeyStore } from '../src/client/index.js';

export interface ClientOverheadResult {
  bareClaimsPerSec: number;
  executePerSec: number;
  /** Extra time per operation of execute() over the bare requests, in percent. */
  overheadPct: number;
}

export async function benchClientOverhead(opts: { baseUrl: string; gatewayKey: string; durationSeconds: number }): Promise<ClientOverheadResult> {
  const client = new GatehouseClient({ baseUrl: opts.baseUrl, apiKey: opts.gatewayKey });
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-keys-'));
  const keyStore = new SqliteKeyStore(path.join(dir, 'keys.db'));
  const executor = new Executor({ client, keyStore });
  const run = randomUUID().slice(0, 8);
  const response = { status: 201, body: { ok: true } };
  let n = 0;

  const bare = async () => {
    const i = n++;
    const claim = await client.claim(`bench-bare-${run}-${i}`, { method: 'POST', route: '/bench/writes', command: { n: i, run } });
    if (claim.outcome !== 'created') throw new Error(`bench: bare claim answered ${claim.outcome}`);
    await client.reportEvent(claim.operation.id, { type: 'sent', lease_token: claim.lease.token });
    await client.reportEvent(claim.operation.id, { type: 'completed', lease_token: claim.lease.token, outcome: 'succeeded', response });
  };
  const viaExecute = async () => {
    const i = n++;
    const r = await executor.execute(`bench-${run}-${i}`, { method: 'POST', route: '/bench/writes', command: { n: i, run } }, async () => ({ ok: true, response }));
    if (r.kind !== 'created') throw new Error(`bench: execute answered ${r.kind}`);
  };

  try {
    // Warm-up: connections, prepared statements, JIT.
    for (let i = 0; i < 20; i++) {
      await bare();
      await viaExecute();
    }
    // Alternate slices of each mode so drift in the server (WAL growth, checkpoints) hits both alike.
    const slices = Math.max(2, Math.round(opts.durationSeconds)) * 2;
    const sliceMs = (opts.durationSeconds * 1000) / slices;
    const totals = { bare: { ops: 0, ms: 0 }, execute: { ops: 0, ms: 0 } };
    for (let s = 0; s < slices; s++) {
      const mode = s % 2 === 0 ? 'bare' : 'execute';
      const fn = mode === 'bare' ? bare : viaExecute;
      const start = performance.now();
      let ops = 0;
      while (performance.now() - start < sliceMs) {
        await fn();
        ops++;
      }
      totals[mode].ops += ops;
      totals[mode].ms += performance.now() - start;
    }
    const bareClaimsPerSec = (totals.bare.ops * 1000) / totals.bare.ms;
    const executePerSec = (totals.execute.ops * 1000) / totals.execute.ms;
    return { bareClaimsPerSec, executePerSec, overheadPct: (bareClaimsPerSec / executePerSec - 1) * 100 };
  } finally {
    keyStore.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { url: { type: 'string' }, key: { type: 'string' }, seconds: { type: 'string', default: '10' } } });
  if (!values.url || !values.key) {
    console.error('usage: bench/client-overhead.ts --url URL --key gh_… [--seconds N]');
    process.exit(2);
  }
  const r = await benchClientOverhead({ baseUrl: values.url, gatewayKey: values.key, durationSeconds: Number(values.seconds) });
  console.log(`bare claim+sent+completed: ${r.bareClaimsPerSec.toFixed(1)}/s; execute(): ${r.executePerSec.toFixed(1)}/s; overhead ${r.overheadPct.toFixed(1)} % (target < 15 %)`);
}
