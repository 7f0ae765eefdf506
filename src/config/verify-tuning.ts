import os from 'node:os';

/** How `gatehouse verify` spreads a large SQLite account over threads (src/verify/sqlite-slices.ts). */
export interface ParallelSettings {
  /** Threads reading slices, this one included; below 2 the single-thread path is used. */
  threads: number;
  /** Accounts with fewer events keep the single-thread path (start-up of workers costs ~0.2 s). */
  minEvents: number;
  /** Most events per slice: bounds the leaves buffered ahead of the main thread (32 bytes each). */
  sliceEvents: number;
  /** This thread's slices, as a fraction of a worker's (sqlite-slices.ts sliceBounds). */
  mainShare: number;
  /** Rows a slice reads per query (slice-check.ts sliceRows). */
  pageRows: number;
  /**
   * Which thread checks which slice (sqlite-slices.ts): 'shared', every thread takes the next
   * slice nobody has taken; 'alternate', slice i is thread (i mod threads)'s, this thread's
   * `mainShare` the size of a worker's (the tests use it to put a slice on a given thread).
   */
  schedule: 'shared' | 'alternate';
}

/**
 * Rows per query in a slice: better-sqlite3's `all()` over a page costs less per row than
 * `iterate()`, which crosses into C++ once per row (256: fastest of 256 / 1024 / 4096 in a
 * read-only micro-benchmark, 2.96 against 3.31 µs/row for iterate).
 */
export const PAGE_ROWS = 256;

/**
 * Defaults: min(available cores, 3) threads (this one and up to two workers: each worker adds
 * ~40 MB to peak RSS on a 1M-event log, measured 204 MiB with 2 threads, 240 with 3, 280 with
 * 4 against the 256 MiB budget), for accounts of 50,000 events or more, slices of at most
 * 32,768 events taken by whichever thread is free ('shared': no thread waits for another's
 * share while there is work left; BENCHMARKS.md, eighth session), the last ones smaller
 * (down to 2,048: sqlite-slices.ts guidedSliceBounds), so the thread that takes the last one
 * keeps the others waiting ~20 ms, not up to a whole slice's ~0.3 s (ninth session). With
 * 'alternate' this thread's slices are 0.85 the size of a worker's (it also starts up, takes
 * the workers' batches and merges their Merkle subtrees:
 * per-thread CPU came out even with 0.85, main 4.82 / 4.73 s against the worker's 5.02 / 4.72;
 * with equal slices 4.55 / 4.56 against 3.93 / 3.98).
 * GATEHOUSE_VERIFY_THREADS (0 or 1: single thread), GATEHOUSE_VERIFY_PARALLEL_MIN,
 * GATEHOUSE_VERIFY_SLICE, GATEHOUSE_VERIFY_SCHEDULE (shared or alternate),
 * GATEHOUSE_VERIFY_MAIN_SHARE (0 < share <= 1, with alternate) and GATEHOUSE_VERIFY_PAGE
 * (rows per query, >= 1) override them (tests force the parallel path, a slice's thread, and
 * page boundaries, on small ledgers with them).
 */
const MAIN_SHARE = 0.85;

export function readVerifyTuning(env: NodeJS.ProcessEnv = process.env): ParallelSettings {
  return {
    threads: wholeNumber(env.GATEHOUSE_VERIFY_THREADS, Math.min(os.availableParallelism(), 3)),
    minEvents: Math.max(wholeNumber(env.GATEHOUSE_VERIFY_PARALLEL_MIN, 50_000), 2),
    sliceEvents: Math.max(wholeNumber(env.GATEHOUSE_VERIFY_SLICE, 32_768), 1),
    mainShare: fraction(env.GATEHOUSE_VERIFY_MAIN_SHARE, MAIN_SHARE),
    pageRows: Math.max(wholeNumber(env.GATEHOUSE_VERIFY_PAGE, PAGE_ROWS), 1),
    schedule: env.GATEHOUSE_VERIFY_SCHEDULE === 'alternate' ? 'alternate' : 'shared',
  };
}

function wholeNumber(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

function fraction(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n > 0 && n <= 1 ? n : fallback;
}
