import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { STOPPED, sliceTaker } from '../../src/verify/slice-check.js';
import { guidedSliceBounds } from '../../src/verify/sqlite-slices.js';
import { runCli } from '../helpers/server-process.js';
import { ledgerFixture } from '../../bench/ledger-fixture.js';
import { FLIP_FIRST_PAYLOAD_BYTE, tamperSqlite } from './ledger-fixture.js';

/**
 * The 'shared' schedule of the parallel SQLite verify (src/verify/sqlite-slices.ts, the default):
 * every thread takes the next slice nobody has taken from one counter. The takers must hand
 * each slice to exactly one thread and stop everyone at once; and on a log long enough that
 * the worker, once started, takes slices while this thread is still checking its own (20,000
 * events in slices of 500), the report must be the single-thread path's, intact and tampered
 * anywhere.
 */

test('shared takers hand out every slice once, across takers, and stop together', (t) => {
  const taken = new SharedArrayBuffer(4);
  const a = sliceTaker({ schedule: 'shared', taken, first: 0, step: 2 });
  const b = sliceTaker({ schedule: 'shared', taken, first: 1, step: 2 });
  const got = [a(), b(), b(), a(), a()];
  t.deepEqual(got, [0, 1, 2, 3, 4]);
  Atomics.store(new Int32Array(taken), 0, STOPPED);
  t.true(a() >= STOPPED && b() >= STOPPED, 'no slice after a stop');
});

test('alternate takers take first, first + step, …, until stopped', (t) => {
  const taken = new SharedArrayBuffer(4);
  const w = sliceTaker({ schedule: 'alternate', taken, first: 1, step: 3 });
  t.deepEqual([w(), w(), w()], [1, 4, 7]);
  Atomics.store(new Int32Array(taken), 0, STOPPED);
  t.is(w(), Number.MAX_SAFE_INTEGER);
});

test('shared slices shrink toward the end: contiguous, every seq once, none over the bound, the last ones small', (t) => {
  for (const [maxSeq, threads, bound] of [[1_000_000, 2, 32_768], [1_000_000, 3, 32_768], [50_000, 2, 32_768], [30, 2, 6], [20_000, 2, 500], [7, 2, 32_768]] as const) {
    const bounds = guidedSliceBounds(maxSeq, threads, bound);
    t.is(bounds[0]!.after, null);
    t.is(bounds.at(-1)!.upTo, null);
    for (let i = 1; i < bounds.length; i++) t.is(bounds[i]!.after, bounds[i - 1]!.upTo);
    const sizes = bounds.map((b) => (b.upTo ?? maxSeq) - (b.after ?? 0));
    t.is(sizes.reduce((a, b) => a + b, 0), maxSeq);
    t.true(sizes.every((size, i) => size <= bound && size >= 1 && (i === 0 || size <= sizes[i - 1]!)), `${maxSeq}/${threads}/${bound}: ${sizes.join(' ')}`);
    // The slice a thread may still be on when another runs out of work is small.
    if (maxSeq >= 16 * bound) t.true(sizes.at(-1)! <= bound / 16, `${maxSeq}/${threads}/${bound}: last ${sizes.at(-1)}`);
  }
  // The bulk of a large log still goes in full slices.
  t.is(guidedSliceBounds(1_000_000, 2, 32_768).filter((b) => b.upTo !== null && b.upTo - (b.after ?? 0) === 32_768).length, 27);
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shared-slices-'));
test.after.always(() => fs.rmSync(tmp, { recursive: true, force: true }));
let base: ReturnType<typeof ledgerFixture> | undefined;

const SHARED = { GATEHOUSE_VERIFY_THREADS: '2', GATEHOUSE_VERIFY_PARALLEL_MIN: '2', GATEHOUSE_VERIFY_SLICE: '500', GATEHOUSE_VERIFY_PAGE: '64', GATEHOUSE_VERIFY_SCHEDULE: 'shared' };

async function report(file: string, dataDir: string, env: Record<string, string>) {
  const r = await runCli(['verify', '--db', file, '--data-dir', dataDir, '--json'], { env });
  return { code: r.code, report: r.stdout === '' ? null : JSON.parse(r.stdout) as unknown, stderr: r.stderr };
}

for (const seq of [0, 250, 9_001, 15_500, 19_750, 20_000]) {
  test(`20,000 events in slices of 500 on any thread: ${seq === 0 ? 'intact' : `a payload flipped at seq ${seq}`}, the single-thread report`, async (t) => {
    base ??= ledgerFixture(20_000, tmp);
    const fixture = await base;
    const file = path.join(tmp, `copy-${seq}.db`);
    fs.copyFileSync(fixture.dbFile, file);
    if (seq !== 0) {
      tamperSqlite(file, (db) => db.prepare(FLIP_FIRST_PAYLOAD_BYTE).run(seq - ((seq - 1) % 5)));
    }
    const [single, shared] = await Promise.all([report(file, fixture.dataDir, { GATEHOUSE_VERIFY_THREADS: '1' }), report(file, fixture.dataDir, SHARED)]);
    t.is(shared.code, seq === 0 ? 0 : 1, shared.stderr);
    t.is(shared.code, single.code);
    t.deepEqual(shared.report, single.report);
  });
}
