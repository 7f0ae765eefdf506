/**
 * Per-row CPU of verify's slice check against the floor's, in one process, alternately, on the
 * same 131,072 rows of the 1M-event fixture (seq 131,073..262,144, its checkpoints every 1,000):
 * the product's checkSlice (src/verify/slice-check.ts: read, check, Merkle subtrees, batches)
 * and bench/lean-verify.mjs's checkChunk (the least work per row). No threads, no start-up:
 * what is left between the two is per-row code. Process CPU µs per row, each round.
 *
 *   npx tsx bench/verify-rows.ts [rounds]      (default 5; ONLY=product or ONLY=floor runs one side, for a profile)
 */
import BetterSqlite3 from 'better-sqlite3';
import { checkSlice as checkSliceSrc } from '../src/verify/slice-check.js';
// @ts-expect-error: plain JavaScript, no declarations
import { checkChunk, setAccount } from './lean-verify.mjs';
import { ledgerFixture } from './ledger-fixture.js';

// DIST=1: the built dist/ (its line numbers survive in a CPU profile; tsx's do not).
const checkSlice: typeof checkSliceSrc = process.env.DIST === '1'
  ? ((await import(new URL('../dist/src/verify/slice-check.js', import.meta.url).href)) as { checkSlice: typeof checkSliceSrc }).checkSlice
  : checkSliceSrc;
const fixture = await ledgerFixture(1_000_000);
const db = new BetterSqlite3(fixture.dbFile, { readonly: true });
db.pragma('cache_size = -2048'); // as both check their slices
const LEVEL = 17;
const lo = 2 ** LEVEL, hi = 2 * 2 ** LEVEL;
const sizes = (db.prepare('SELECT tree_size FROM checkpoints WHERE account_id = ? ORDER BY tree_size').pluck().all(fixture.accountId)) as number[];
setAccount(fixture.accountId);
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const perRow: Record<'product' | 'floor', number[]> = { product: [], floor: [] };
const only = process.env.ONLY;
for (let round = 0; round < Number(process.argv[2] ?? 5); round++) {
  let t = cpu();
  if (only !== 'floor') {
  let taken = 0;
  const task = { id: 0, accountId: fixture.accountId, after: lo, upTo: hi, dataKey: null, cuts: sizes.filter((s) => s > lo && s <= hi), pageRows: 256 };
  const stopped = checkSlice(db, task, null, (b) => {
    taken += b.count;
    return true;
  });
  perRow.product.push(((cpu() - t) / (hi - lo)) * 1e6);
  if (stopped || taken !== hi - lo) throw new Error('the product stopped on an intact fixture');
  }
  if (only === 'product') continue;
  t = cpu();
  const r = checkChunk(db, fixture.accountId, 1, LEVEL, Math.ceil(fixture.events / 2 ** LEVEL), sizes) as { bad?: unknown; count: number };
  perRow.floor.push(((cpu() - t) / (hi - lo)) * 1e6);
  if (r.bad || r.count !== hi - lo) throw new Error('the floor failed an intact fixture');
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
if (only === undefined) {
  // Both in the same round see the same neighbours: the ratio moves less than either.
  const ratios = perRow.product.map((p, i) => p / perRow.floor[i]!);
  console.log(`product / floor per round: ${ratios.map((x) => x.toFixed(3)).join(' ')}; median ${median(ratios).toFixed(3)}`);
}
for (const [name, v] of Object.entries(perRow).filter(([, v]) => v.length > 0)) {
  console.log(`${name}: µs/row ${v.map((x) => x.toFixed(2)).join(' ')}; median ${median(v).toFixed(2)}, best ${Math.min(...v).toFixed(2)}`);
}
