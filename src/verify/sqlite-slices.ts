/**
 * Parallel verify of one large account in a SQLite file: reading rows through better-sqlite3
 * costs as much as all the hashing, so one thread cannot keep up with the SHA-256 ceiling.
 *
 * The account's seq range is cut into contiguous slices (at most `sliceEvents` each, so the
 * leaves waiting for the main thread stay bounded whatever the log's size). Worker threads
 * (sqlite-slice-worker.ts), each with its own read-only connection, check one slice at a time
 * with checkRowFast — exactly the rows ChainVerifier.addRow's fast path accepts — and send the
 * Merkle leaf hashes back in batches. The main thread feeds the batches in seq order to the
 * account's ChainVerifier (addCheckedLeaves), which checks every batch boundary (next seq,
 * prev_hash = hash of the last event taken), appends the leaves to its frontier and compares
 * every checkpoint at its size exactly as for single-thread rows.
 *
 * Failures are never judged here. At the first row a worker's fast path refuses, or a
 * boundary that does not link, or any worker error, the slices stop and the main thread goes
 * on from the last event taken with the single-thread reference path (addRow over `seq >
 * last`, in the same order the reference query gives): the verifier's state at that point is
 * the one the reference path would have, so the report (first_bad_seq, reason, counts) is the
 * same.
 *
 * Slices partition the reference order `ORDER BY seq` exactly: the first reads from the very
 * first row (so a NULL or non-positive seq is seen) up to its bound, middle ones `seq > a AND
 * seq <= b`, the last has no upper bound (so text or blob seqs, which sort after numbers, are
 * seen).
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { VerificationRun } from './run.js';

export interface SliceTask {
  id: number;
  accountId: string;
  /** Rows with seq > after; null: from the first row in seq order. */
  after: number | null;
  /** Rows with seq <= upTo; null: to the end. */
  upTo: number | null;
  dataKey: Uint8Array | null;
}

export interface SliceBatch {
  id: number;
  kind: 'leaves';
  firstSeq: number;
  firstPrev: string;
  lastHash: string;
  count: number;
  leaves: ArrayBuffer;
}

export interface SliceEnd {
  id: number;
  kind: 'end';
  /** The fast path refused a row (or an error happened) before the slice's end. */
  stopped: boolean;
}

export interface ParallelSettings {
  /** Worker threads; below 2 the single-thread path is used. */
  threads: number;
  /** Accounts with fewer events keep the single-thread path (start-up of workers costs ~0.2 s). */
  minEvents: number;
  /** Most events per slice: bounds the leaves buffered ahead of the main thread (32 bytes each). */
  sliceEvents: number;
}

function positiveInt(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/**
 * Defaults: min(available cores, 4) workers, for accounts of 50,000 events or more, slices of
 * at most 262,144 events. GATEHOUSE_VERIFY_THREADS (0 or 1: single thread),
 * GATEHOUSE_VERIFY_PARALLEL_MIN and GATEHOUSE_VERIFY_SLICE override them (tests force the
 * parallel path on small ledgers with them). Read here rather than in src/config because
 * verify is an offline tool on src/core and src/verify only.
 */
export function parallelSettings(env: NodeJS.ProcessEnv = process.env): ParallelSettings {
  return {
    threads: positiveInt(env.GATEHOUSE_VERIFY_THREADS, Math.min(os.availableParallelism(), 4)),
    minEvents: Math.max(positiveInt(env.GATEHOUSE_VERIFY_PARALLEL_MIN, 50_000), 2),
    sliceEvents: Math.max(positiveInt(env.GATEHOUSE_VERIFY_SLICE, 262_144), 1),
  };
}

/**
 * Each worker is its own V8 heap: smaller young and old generations than the defaults keep
 * the whole process under 256 MiB on a 1M-event log at no measured cost in CPU time (a worker
 * holds ~20 MB live). A worker that runs out of heap ends with an error, and the reference
 * path takes over.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 };

/** A worker running the slice worker, under tsx when these sources run as TypeScript. */
function startWorker(file: string): Worker {
  const self = import.meta.url;
  if (self.endsWith('.ts')) {
    // A worker does not inherit the tsx hooks the CLI registered (nor does execArgv --import
    // apply to a .ts entry on Node 20): register them in the worker before importing the entry.
    const api = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./sqlite-slice-worker.ts', self).href;
    return new Worker(`import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`, {
      eval: true, workerData: { file }, resourceLimits: WORKER_LIMITS,
    });
  }
  return new Worker(new URL('./sqlite-slice-worker.js', self), { workerData: { file }, resourceLimits: WORKER_LIMITS });
}

/**
 * Verify the account's events in slices on worker threads, feeding `run` (its account already
 * begun). Returns `{ done: true }` when every event was taken, else the seq after which the
 * caller must go on with the reference path (`after: null`: from the first row).
 */
export async function verifySlices(options: {
  file: string;
  run: VerificationRun;
  accountId: string;
  /** MAX(seq) of the account. */
  maxSeq: number;
  dataKey: Uint8Array | null;
  settings: ParallelSettings;
}): Promise<{ done: true } | { done: false; after: number | null }> {
  const { file, run, accountId, maxSeq, dataKey, settings } = options;
  const count = Math.max(Math.ceil(maxSeq / settings.sliceEvents), settings.threads);
  const slices: SliceTask[] = [];
  for (let i = 0, prev: number | null = null; i < count; i++) {
    const upTo = i === count - 1 ? null : Math.round((maxSeq * (i + 1)) / count);
    slices.push({ id: i, accountId, after: prev, upTo, dataKey });
    prev = upTo;
  }
  const workerCount = Math.min(settings.threads, slices.length);
  // Slices handed out but not yet taken by the verifier: bounds the leaves held in memory.
  const maxAhead = workerCount + 1;
  const state = slices.map(() => ({ batches: [] as SliceBatch[], ended: false, stopped: false }));
  const workers: Worker[] = [];
  const idle: Worker[] = [];
  const sliceOf = new Map<Worker, number>();
  let cur = 0;
  let next = 0;
  let after: number | null = null;
  let stop = false;

  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: { done: true } | { done: false; after: number | null }) => {
      if (settled) return;
      settled = true;
      stop = true;
      void Promise.all(workers.map((w) => w.terminate())).finally(() => resolve(result));
    };
    const assign = () => {
      while (!stop && idle.length > 0 && next < slices.length && next < cur + maxAhead) {
        const w = idle.pop()!;
        sliceOf.set(w, next);
        w.postMessage(slices[next]);
        next++;
      }
    };
    const drain = () => {
      while (cur < slices.length) {
        const st = state[cur]!;
        for (let b = st.batches.shift(); b !== undefined; b = st.batches.shift()) {
          const leaves = Buffer.from(b.leaves);
          if (!run.addCheckedLeaves(b.firstSeq, b.firstPrev, b.lastHash, leaves, 0, b.count)) return finish({ done: false, after });
          after = b.firstSeq + b.count - 1;
        }
        if (!st.ended) return;
        if (st.stopped) return finish({ done: false, after });
        cur++;
        assign();
      }
      finish({ done: true });
    };
    const failed = (w: Worker) => {
      const id = sliceOf.get(w);
      sliceOf.delete(w);
      if (id !== undefined && !state[id]!.ended) Object.assign(state[id]!, { ended: true, stopped: true });
      stop = true; // no new slices; the reference path takes over where the taken events end
      drain();
    };
    for (let i = 0; i < workerCount; i++) {
      const w = startWorker(file);
      workers.push(w);
      idle.push(w);
      w.on('message', (m: SliceBatch | SliceEnd) => {
        if (settled) return;
        const st = state[m.id]!;
        if (m.kind === 'leaves') {
          st.batches.push(m);
          if (m.id === cur) drain();
          return;
        }
        st.ended = true;
        st.stopped = m.stopped;
        sliceOf.delete(w);
        if (m.stopped) stop = true;
        idle.push(w);
        assign();
        drain();
      });
      w.on('error', () => failed(w));
      w.on('exit', () => {
        if (!settled) failed(w);
      });
    }
    assign();
  });
}
