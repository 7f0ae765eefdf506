/**
 * Parallel verify of one large account in a SQLite file: reading rows through better-sqlite3
 * costs as much as all the hashing, so one thread cannot keep up with the SHA-256 ceiling.
 *
 * The account's seq range is cut into contiguous slices (at most `sliceEvents` each, so the
 * batches waiting for the main thread stay bounded whatever the log's size). With T threads the
 * main thread and T-1 worker threads (sqlite-slice-worker.ts), each with its own read-only
 * connection, check them, each taking the next slice no thread has taken (one counter in
 * shared memory: a thread slowed by its start-up or by other work on the machine takes fewer,
 * and none waits on another's fixed share; ParallelSettings.schedule), all the same way (slice-check.ts):
 * with checkEventRowHexPayload — exactly the rows ChainVerifier.addRow's fast path accepts —
 * giving in batches the roots of the perfect subtrees of the global Merkle tree that cover
 * their rows' leaves (SubtreeRange), cut at every size where a checkpoint waits (given with
 * the slice): so the thread that owns the frontier hashes a few subtree roots per checkpoint
 * instead of every leaf and the nodes above it. The main thread feeds every batch in seq
 * order to the account's ChainVerifier through addCheckedSubtrees, which checks every batch
 * boundary (next seq, prev_hash = hash of the last event taken) and that no subtree spans a
 * checkpoint's size, appends the subtrees to its frontier and compares every checkpoint at its
 * size exactly as for single-thread rows; a batch that comes before its turn (a slice after one
 * still being checked) waits for it. Taking a batch there is equivalent to addRow on its
 * rows (the same check against the same expected seq and prev_hash, the same frontier after
 * it), so the verifier's state is the reference path's.
 *
 * Failures are never judged in a slice. At the first row a slice's fast path refuses, or a
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
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { AccountStart, VerificationRun } from './run.js';
import { type DataKey, NO_DATA_KEY, type Opens, payloadCheck } from '../core/account-data-key.js';
import { type SliceAssignment, type SliceBatch, type SliceEnd, type SliceTask, STOPPED, checkSlice, sliceTaker } from './slice-check.js';
import type { ParallelSettings } from '../config/verify-tuning.js';

export type { ParallelSettings };



/**
 * Each worker is its own V8 heap: smaller young and old generations than the defaults keep
 * the whole process under 256 MiB on a 1M-event log at no measured cost in CPU time (a worker
 * holds ~20 MB live). A worker that runs out of heap ends with an error, and the reference
 * path takes over.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 };

/**
 * A worker running the slice worker: the built sqlite-slice-worker.js next to this file in
 * dist/ (the CLI and the package), or the TypeScript source under tsx when the tests import
 * src/ directly (tsx is a dev dependency, resolved only on that path).
 */
function startWorker(file: string): Worker {
  const self = import.meta.url;
  if (self.endsWith('.ts')) {
    // A worker does not inherit the tsx hooks the test runner registered (nor does execArgv
    // --import apply to a .ts entry on Node 20): register them in the worker before the entry.
    const api = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./sqlite-slice-worker.ts', self).href;
    return new Worker(`import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`, {
      eval: true, workerData: { file }, resourceLimits: WORKER_LIMITS,
    });
  }
  return new Worker(new URL('./sqlite-slice-worker.js', self), { workerData: { file }, resourceLimits: WORKER_LIMITS });
}

/**
 * Worker threads for the slices, started as soon as the file is open (sqlite-reader.ts), when its
 * largest chain is long enough for slices: a worker's start-up (a V8 isolate, its modules, the
 * file opened: ~0.1 s) then overlaps this thread's own (the keys, the checkpoints read) instead
 * of following it, and every checkpoint's signature is checked after the workers have their
 * slices (verifySlices; ~0.15 s on a 1M-event log). Until verifySlices gives them
 * work, a worker that fails is only noted (`failed`), never an unhandled 'error'.
 */
export class SliceWorkers {
  failed = false;

  private constructor(readonly workers: Worker[]) {
    for (const worker of workers) {
      // Kept to the end ('on', not 'once'): an 'error' with no listener would throw in this thread.
      worker.on('error', () => (this.failed = true));
      worker.on('exit', () => (this.failed = true));
    }
  }

  /** `count` workers on `file`, or null when one cannot start (thread limits; from src/, tsx not resolvable): the reference path then does it all. */
  static start(file: string, count: number): SliceWorkers | null {
    const workers: Worker[] = [];
    try {
      for (let w = 0; w < count; w++) workers.push(startWorker(file));
    } catch {
      for (const worker of workers) void worker.terminate();
      return null;
    }
    return new SliceWorkers(workers);
  }

  async terminate(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

/**
 * The 'alternate' schedule's slice bounds: contiguous, covering seq 1..maxSeq and whatever sorts outside it (the
 * first has no lower bound, the last no upper one), slice i this thread's when i % threads is
 * 0. This thread's slices are `mainShare` the size of a worker's, since it also takes the
 * workers' batches and merges their subtrees; no slice exceeds sliceEvents.
 */
export function sliceBounds(maxSeq: number, threads: number, settings: Pick<ParallelSettings, 'sliceEvents' | 'mainShare'>): Array<{ after: number | null; upTo: number | null }> {
  const weight = (i: number) => (i % threads === 0 ? settings.mainShare : 1);
  let count = Math.max(Math.ceil(maxSeq / settings.sliceEvents), threads);
  let total = 0;
  for (let i = 0; i < count; i++) total += weight(i);
  // Smaller slices here make the workers' larger: add a round of slices (one here, one per
  // worker) while a worker's would exceed the bound.
  while (maxSeq / total > settings.sliceEvents) {
    count += threads;
    total += settings.mainShare + threads - 1;
  }
  const bounds: Array<{ after: number | null; upTo: number | null }> = [];
  let prev: number | null = null;
  let sum = 0;
  for (let i = 0; i < count; i++) {
    sum += weight(i);
    const upTo = i === count - 1 ? null : Math.round((maxSeq * sum) / total);
    bounds.push({ after: prev, upTo });
    prev = upTo;
  }
  return bounds;
}

/**
 * Slice bounds for the 'shared' schedule: slices of sliceEvents while much is left, then
 * smaller ones as the work runs out, so that the thread that takes the last slice keeps the
 * others waiting for a small one only.
 *
 * Why: with equal slices the threads finish up to a whole slice apart, and the one that ends
 * first idles through the rest of the other's (32,768 events: ~0.3 s at ~110k events/s per
 * thread; the main thread's profile showed 0.28 s idle at the end of a 1M-event run). Sizes
 * shrinking as the work runs out ("guided" scheduling) bound that wait by the last slices'
 * size. Each slice is remaining / (2·threads) events (so the threads still busy when one
 * takes it have about as much left between them), at most sliceEvents, at least
 * sliceEvents/16 (a slice costs two prepared statements and a seek: ~0.1 ms).
 */
export function guidedSliceBounds(maxSeq: number, threads: number, sliceEvents: number): Array<{ after: number | null; upTo: number | null }> {
  const smallest = Math.max(1, Math.floor(sliceEvents / 16));
  const bounds: Array<{ after: number | null; upTo: number | null }> = [];
  let after: number | null = null;
  let done = 0;
  for (;;) {
    const size = Math.min(sliceEvents, Math.max(smallest, Math.ceil((maxSeq - done) / (2 * threads))));
    // The last slice has no upper bound (it reads whatever sorts after the last number too).
    if (done + size >= maxSeq) {
      bounds.push({ after, upTo: null });
      return bounds;
    }
    done += size;
    bounds.push({ after, upTo: done });
    after = done;
  }
}

type Outcome = { done: true } | { done: false; after: number | null };

/**
 * Verify the account's events in slices, feeding `run`, which begins `start` here once the
 * workers have their slices (its checkpoints' signatures, ~0.1 ms each, are then checked while
 * the workers check rows instead of before they may start): this
 * thread (a worker costs ~0.3 CPU-s and ~35 MB to start, so this thread is one of the T) and
 * T-1 workers check slices as settings.schedule says; this thread takes every slice's batches
 * in seq order with run.addCheckedSubtrees, keeping those that come early (a slice after one
 * still being checked, its own or a worker's) until their turn. Returns `{ done: true }` when
 * every event was taken, else the point after which the caller must go on with the reference
 * path (`after: null`: from the first row).
 */
export async function verifySlices(options: {
  /** Started for these slices (SliceWorkers.start); their owner terminates them. */
  workers: SliceWorkers;
  /** This thread's read-only connection to the same file. */
  db: BetterSqlite3.Database;
  /** Begun here (beginAccount) once the workers have their slices. */
  run: VerificationRun;
  start: AccountStart;
  /** MAX(seq) of the account. */
  maxSeq: number;
  /**
   * The account's data key when payloads are opened (--master-key); NO_DATA_KEY when they must
   * be but the account has none: the slices refuse every payload, so the reference path takes
   * over at the first event that carries one and names it.
   */
  dataKey: DataKey | typeof NO_DATA_KEY | null;
  settings: ParallelSettings;
}): Promise<Outcome> {
  const { db, run, start, maxSeq, dataKey, settings } = options;
  const { accountId } = start;
  // A worker that failed while this thread read the keys and the file: the reference path does it all.
  if (options.workers.failed) {
    run.beginAccount(start);
    return { done: false, after: null };
  }
  const threads = Math.max(settings.threads, 2);
  // The slices are cut where the checkpoints claim a size, before their signatures are checked
  // (that is ~0.1 ms each: the workers start on their slices meanwhile). Every size where a
  // trusted checkpoint waits is among the claims; one that fails its check is only an extra cut.
  const claimed = run.claimedSizes(start);
  // Shrinking slices when any thread may take any slice; this thread's smaller when it has its own.
  const bounds = settings.schedule === 'shared' ? guidedSliceBounds(maxSeq, threads, settings.sliceEvents) : sliceBounds(maxSeq, threads, settings);
  const slices: SliceTask[] = bounds.map(({ after, upTo }, id) => ({
    id, accountId, after, upTo, dataKey: dataKey === null || dataKey === NO_DATA_KEY ? dataKey : dataKey.bytes, pageRows: settings.pageRows, cuts: claimed.filter((s) => (after === null || s > after) && (upTo === null || s <= upTo)),
  }));
  const taken = new SharedArrayBuffer(4);
  const counter = new Int32Array(taken);
  /** Per slice: batches not yet taken, and whether it ended (and stopped early). `wake` wakes this thread. */
  const state = slices.map(() => ({ batches: [] as SliceBatch[], ended: false, stopped: false }));
  let wake: (() => void) | null = null;
  const stop = () => Atomics.store(counter, 0, STOPPED);
  // A worker per slice past this thread's first at most; one with no slice to take stays idle until terminated.
  const workers = options.workers.workers.slice(0, Math.min(threads - 1, slices.length - 1));
  for (const [w, worker] of workers.entries()) {
    worker.on('message', (m: SliceBatch | SliceEnd) => {
      const st = state[m.id]!;
      if (st.ended) return;
      if (m.kind === 'subtrees') {
        st.batches.push(m);
      } else {
        st.ended = true;
        st.stopped = m.stopped;
      }
      wake?.();
    });
    // A worker that fails may hold any slice not ended: all of them stop, and no more are taken.
    const broken = () => {
      stop();
      for (const st of state) {
        if (!st.ended) {
          st.ended = true;
          st.stopped = true;
        }
      }
      wake?.();
    };
    worker.on('error', broken);
    worker.on('exit', broken);
    const assignment: SliceAssignment = { kind: 'slices', slices, schedule: settings.schedule, taken, first: w + 1, step: threads };
    worker.postMessage(assignment);
  }

  run.beginAccount(start);
  if (!run.acceptsCheckedSubtrees) {
    // The data key does not unwrap: the reference path takes every row and names the failure.
    stop();
    return { done: false, after: null };
  }

  const next = sliceTaker({ schedule: settings.schedule, taken, first: 0, step: threads });
  let after: number | null = null;
  /** The first slice whose batches are not all taken. */
  let turn = 0;
  const opens: Opens | null = payloadCheck(dataKey, accountId);
  const takeBatch = (b: SliceBatch): boolean => {
    if (!run.addCheckedSubtrees(b.firstSeq, b.firstPrev, b.lastHash, b.count, new Uint8Array(b.levels), Buffer.from(b.hashes), b.subtrees, b.ts)) return false;
    after = b.firstSeq + b.count - 1;
    return true;
  };
  /** Take what is ready, in order. False: the slices end here (a refusal, a stopped slice). */
  const takeReady = (): boolean => {
    for (; turn < slices.length; turn++) {
      const st = state[turn]!;
      for (let b = st.batches.shift(); b !== undefined; b = st.batches.shift()) if (!takeBatch(b)) return false;
      if (!st.ended) return true;
      if (st.stopped) return false;
      after = slices[turn]!.upTo;
    }
    return true;
  };
  const outcome = async (): Promise<Outcome> => {
    let mine = true;
    for (;;) {
      if (!takeReady()) {
        stop();
        return { done: false, after };
      }
      if (turn === slices.length) return { done: true };
      const i = mine ? next() : slices.length;
      if (i < slices.length) {
        // A slice for this thread: its batches taken as they come when it is the turn's,
        // kept for their turn otherwise.
        const st = state[i]!;
        const direct = i === turn;
        let refused = false;
        st.stopped = checkSlice(db, slices[i]!, opens, (b) => {
          if (!direct) {
            st.batches.push(b);
            return true;
          }
          if (takeBatch(b)) return true;
          refused = true;
          return false;
        });
        st.ended = true;
        if (refused) {
          stop();
          return { done: false, after };
        }
        if (direct && !st.stopped) {
          after = slices[i]!.upTo;
          turn++;
        }
        if (st.stopped) mine = false; // nothing after it matters; wait for the slices before it
        // Let the workers' messages in before the next slice.
        await nextTurn();
      } else {
        mine = false;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    }
  };
  try {
    return await outcome();
  } finally {
    // Their owner ends them next: that exit is no failure.
    for (const w of workers) w.removeAllListeners('exit');
  }
}
