// An interleaved A/B of the in-process claim path (bench/claim-path.ts) between two checkouts:
// each pair runs A's and B's claim-path as child processes one after the other (the order turned
// each pair), and the answer is the median of the pairs' B/A ratios of CPU per operation, which
// machine noise shared by the two halves of a pair mostly cancels. For a change to the store, the
// ledger or the domain whose effect is a few per cent: HTTP (bench/ab.ts) cannot see that here.
//
//   node --import=tsx bench/claim-path-ab.ts --a ../old [--b .] [--pairs 10] -- [claim-path args, e.g. --only claims --claims 4000]
import path from 'node:path';
import { parseArgs } from 'node:util';
import { claimPathInChild } from './claim-path-child.js';

const { values, positionals } = parseArgs({
  options: { a: { type: 'string' }, b: { type: 'string', default: '.' }, pairs: { type: 'string', default: '10' } },
  allowPositionals: true,
});
if (!values.a) throw new Error('--a DIR: the checkout to compare with (with its node_modules)');
const trees = { A: path.resolve(values.a), B: path.resolve(values.b) };
const args = positionals.length > 0 ? positionals : ['--only', 'claims', '--claims', '4000'];

/** CPU µs per operation of each path claim-path measured, by path name: each tree's claim-path compiled by its own tsc (compiled.ts). */
function runOnce(tree: string): Map<string, number> {
  const result = claimPathInChild(args, tree) as Record<string, unknown>;
  const costs = new Map<string, number>();
  for (const [name, value] of Object.entries(result)) {
    if (name === 'cpu_us_per_claim') costs.set('claims', value as number);
    else if (value && typeof value === 'object' && 'cpu_us' in value) costs.set(name, (value as { cpu_us: number }).cpu_us);
  }
  return costs;
}

const runs: Record<'A' | 'B', Array<Map<string, number>>> = { A: [], B: [] };
for (let pair = 0; pair < Number(values.pairs); pair++) {
  for (const side of pair % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) runs[side].push(runOnce(trees[side]));
  process.stderr.write(`pair ${pair + 1}: ${[...runs.B.at(-1)!].map(([name, b]) => `${name} ${runs.A.at(-1)!.get(name)} → ${b} µs`).join(', ')}\n`);
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
for (const name of runs.A[0]!.keys()) {
  const a = runs.A.map((r) => r.get(name)!);
  const b = runs.B.map((r) => r.get(name)!);
  const ratios = a.map((x, i) => b[i]! / x);
  console.log(`${name}: A ${a.join(' ')} µs; B ${b.join(' ')} µs; B/A median of pairs × ${median(ratios).toFixed(3)} (range ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`);
}
