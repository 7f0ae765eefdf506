// An interleaved A/B of new-key claims and replays between two checkouts of Gatehouse on SQLite:
// each tree's `gatehouse serve` runs side by side, and they are measured in alternating slices
// (A B, B A, …) so that machine noise hits both alike. For "no slowdown on the claim path"
// against an older tree, checked out beside this one (git worktree add ../old <commit>, with its
// own node_modules and, for trees that ship JavaScript, `npm run build`).
//
//   node --import=tsx bench/ab.ts --a ../old/bin/gatehouse.js [--b bin/gatehouse.js] [--rounds 4] [--seconds 8] [--postgres]
//
// --postgres runs both on PostgreSQL instead (each on a fresh database of the bench server).
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultPostgresAdminUrl, gatewayKeys, newKeyLoad, withGatehouse, type Rate } from './http-claims.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string' }, b: { type: 'string', default: 'bin/gatehouse.js' }, rounds: { type: 'string', default: '4' }, seconds: { type: 'string', default: '8' },
    postgres: { type: 'boolean', default: false },
  },
});
if (!values.a) throw new Error('--a PATH/bin/gatehouse.js: the tree to compare with');
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const bins = { A: path.resolve(values.a), B: path.resolve(values.b) };

const store = values.postgres ? { kind: 'postgres' as const, adminUrl: defaultPostgresAdminUrl() } : { kind: 'sqlite' as const };
const result = await withGatehouse({ ...store, bin: bins.A }, 1, false, [], ([a]) =>
  withGatehouse({ ...store, bin: bins.B }, 1, false, [], async ([b]) => {
    const servers = { A: a!, B: b! };
    const keys = { A: await gatewayKeys(a!), B: await gatewayKeys(b!) };
    for (const side of ['A', 'B'] as const) await newKeyLoad([servers[side]], keys[side], 50, 2);
    const slices: Record<'A' | 'B', Rate[]> = { A: [], B: [] };
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
        const rate = await newKeyLoad([servers[side]], keys[side], 50, seconds);
        slices[side].push(rate);
        process.stderr.write(`[ab] round ${round + 1} ${side}: ${rate.rps} req/s, p99 ${rate.p99_ms} ms\n`);
      }
    }
    return slices;
  }));
const mean = (rates: Rate[]) => Math.round(rates.reduce((sum, r) => sum + r.rps, 0) / rates.length);
const summary = {
  a: bins.A, b: bins.B, rounds, seconds,
  a_rps: result.A.map((r) => r.rps), b_rps: result.B.map((r) => r.rps),
  a_p99_ms: result.A.map((r) => r.p99_ms), b_p99_ms: result.B.map((r) => r.p99_ms),
  a_max_ms: result.A.map((r) => r.max_ms), b_max_ms: result.B.map((r) => r.max_ms),
  a_max_steady_ms: result.A.map((r) => r.max_steady_ms), b_max_steady_ms: result.B.map((r) => r.max_steady_ms),
  b_over_a: Math.round((mean(result.B) / mean(result.A)) * 1000) / 1000,
};
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
