/**
 * One slice of the parallel SQLite verify (sqlite-slices.ts), checked the same way on a worker
 * thread and on the main thread: its rows in seq order with checkEventRowOfAccountHexPayload — the
 * checks ChainVerifier.addRow's fast path makes, on payloads read as hex text (better-sqlite3
 * builds a Buffer with its own allocation for every BLOB; a string costs much less) — each
 * against its predecessor in the slice, and the roots of the perfect Merkle subtrees over the
 * rows it accepted (SubtreeRange), ended at every checkpoint size the slice names, in batches
 * for ChainVerifier.addCheckedSubtrees. It stops at the first row the fast path refuses (or
 * any error): it never decides what is wrong, the reference path re-reads from there.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { NO_DATA_KEY, Opens } from '../core/account-data-key.js';
import { checkEventRowOfAccountHexPayload } from '../core/event-hash.js';
import { HEX64 } from '../core/event-shape.js';
import { EVENT_COLUMNS_OF_ACCOUNT, SLICE_ACCOUNT, SLICE_ROW } from './columns.js';
import { SubtreeRange } from '../core/merkle.js';
import { TsRun, type TsRunSummary } from '../core/ts-order.js';

/** One slice, as the main thread hands it to a worker (sqlite-slices.ts cuts them). */
export interface SliceTask {
  id: number;
  accountId: string;
  /** Rows with seq > after; null: from the first row in seq order. */
  after: number | null;
  /** Rows with seq <= upTo; null: to the end. */
  upTo: number | null;
  /** The data key's bytes; NO_DATA_KEY: payloads must open and there is no key (every one is refused); null: none opened. */
  dataKey: Uint8Array | typeof NO_DATA_KEY | null;
  /** Sizes in (after, upTo] where a checkpoint waits for the root, ascending: every one ends a subtree. */
  cuts: number[];
  /** Rows per query (sliceRows). */
  pageRows: number;
}

export interface SliceBatch {
  id: number;
  kind: 'subtrees';
  firstSeq: number;
  firstPrev: string;
  lastHash: string;
  /** Events in the batch. */
  count: number;
  /** The subtrees over their leaves, in leaf order: `subtrees` levels (bytes) and roots (32 bytes each). */
  subtrees: number;
  levels: ArrayBuffer;
  hashes: ArrayBuffer;
  /** The batch's event times: first, last, and where they went backwards inside it. */
  ts: TsRunSummary;
}

export interface SliceEnd {
  id: number;
  kind: 'end';
  /** The fast path refused a row (or an error happened) before the slice's end. */
  stopped: boolean;
}

/** What a worker is given once: every slice, and how to take them (sqlite-slice-worker.ts). */
export interface SliceAssignment {
  kind: 'slices';
  slices: SliceTask[];
  /** 'shared': the next slice is Atomics.add(taken, 0, 1); 'alternate': `first`, then every `step`-th. */
  schedule: 'shared' | 'alternate';
  taken: SharedArrayBuffer;
  first: number;
  step: number;
}

/** The counter's value once the slices must stop: past any slice, and no add reaches it again. */
export const STOPPED = 0x3fffffff;

/**
 * The next slice a thread checks, or a number >= the count when there is none: with 'shared'
 * the next one no thread has taken (one counter for all, so a thread slowed by its start-up or
 * by the machine's other work takes fewer), with 'alternate' its own `first + k·step`.
 */
export function sliceTaker(assignment: Omit<SliceAssignment, 'kind' | 'slices'>): () => number {
  const taken = new Int32Array(assignment.taken);
  if (assignment.schedule === 'shared') return () => Atomics.add(taken, 0, 1);
  let next = assignment.first;
  return () => {
    // Stopped (the counter set past the end): nothing more for anyone.
    if (Atomics.load(taken, 0) === STOPPED) return Number.MAX_SAFE_INTEGER;
    const i = next;
    next += assignment.step;
    return i;
  };
}

/**
 * A batch ends at every multiple of BATCH events (global sizes: the subtrees between two are
 * then one perfect subtree unless a checkpoint cuts them), or earlier when its buffers could
 * not take another run of subtrees (at most ~2 per level between two cuts).
 */
const BATCH = 8192;
const MAX_SUBTREES = 1024;
const RUN_SUBTREES = 2 * 53;

/**
 * The rows of one slice in the reference order (`ORDER BY seq`), from a connection's own
 * statements: EVENT_COLUMNS_OF_ACCOUNT (EVENT_ROW_COLUMNS less account_id, which the query
 * checks, with the payload as hex text).
 *
 * Read in pages of `pageRows` with `all()` (one call into better-sqlite3 per page instead of
 * one per row as `iterate()` makes), by keyset: the next page is the same query with `seq >=
 * last` added, where `last` is the seq of the page's last row, and its first row (that same
 * row, seen again) is skipped. `>=` and not `>`: a second row with the same seq (possible
 * only in a file whose events table lost its primary key) comes right after it, as in the
 * unpaged query, and the caller refuses it; with `>` it would be skipped. The caller has
 * taken `last` before asking for more, so it is a safe integer (anything else ends the slice
 * with an error, which the caller treats as a refusal). All pages are read in one read
 * transaction, so they see one snapshot of the file, as one statement does.
 */
export function* sliceRows(db: BetterSqlite3.Database, task: Pick<SliceTask, 'accountId' | 'after' | 'upTo'>, pageRows: number): Generator<unknown[]> {
  const { accountId, after, upTo } = task;
  const select = `SELECT ${EVENT_COLUMNS_OF_ACCOUNT} FROM events WHERE ${SLICE_ACCOUNT}`;
  const upper = after !== null && upTo !== null ? ' AND seq <= ?' : '';
  const first = db.prepare(`${select}${after === null ? '' : ' AND seq > ?'}${upper} ORDER BY seq LIMIT ?`).raw(true);
  // Without `seq > after` (implied: last > after), which SQLite would take as the index range's start.
  const next = db.prepare(`${select} AND seq >= ?${upper} ORDER BY seq LIMIT ?`).raw(true);
  const bound: unknown[] = upper === '' ? [] : [upTo];
  const began = !db.inTransaction;
  if (began) db.exec('BEGIN');
  try {
    const account = { account: accountId };
    let rows = first.all(account, ...(after === null ? [] : [after]), ...bound, pageRows) as unknown[][];
    let limit = pageRows;
    let from = 0;
    for (;;) {
      for (let i = from; i < rows.length; i++) {
        const r = rows[i]!;
        // The first slice reads from the very first row in the reference order (whatever its seq) up to upTo.
        if (after === null && upTo !== null && typeof r[0] === 'number' && r[0] > upTo) return;
        yield r;
      }
      if (rows.length < limit) return;
      const last = rows[rows.length - 1]![0];
      if (typeof last !== 'number' || !Number.isSafeInteger(last)) throw new Error('a page ends on a row the slice did not take');
      rows = next.all(account, last, ...bound, pageRows + 1) as unknown[][];
      if (rows.length === 0 || rows[0]![0] !== last) throw new Error('the rows changed between two pages');
      limit = pageRows + 1;
      from = 1;
    }
  } finally {
    if (began && db.inTransaction) db.exec('COMMIT');
  }
}

/**
 * A slice's accepted rows, gathered into batches: the subtrees over their leaves (cut where
 * checkSlice says), their first seq and prev_hash, last hash and event times.
 *
 * A class, not closures made in checkSlice: V8 inlines these calls into checkSlice's optimized
 * code against the functions it saw there, and closures made anew for every slice are new
 * functions, so each slice deoptimized that code and had it compiled again (seventeen compiles
 * of checkSlice in a 1M-event verify; BENCHMARKS.md, seventeenth session).
 */
class SliceBatches {
  readonly #id: number;
  readonly #range: SubtreeRange;
  readonly #times = new TsRun();
  readonly #emit: (batch: SliceBatch) => boolean | void;
  #levels = new Uint8Array(MAX_SUBTREES);
  // Slow: its own ArrayBuffer, never Buffer's shared pool, since it is transferred.
  #hashes = Buffer.allocUnsafeSlow(MAX_SUBTREES * 32);
  #subtrees = 0;
  #count = 0;
  #firstSeq = 0;
  #firstPrev = '';
  #lastHash = '';
  /** `emit` refused a batch: the slice stops. */
  refused = false;

  constructor(id: number, treeSize: number, emit: (batch: SliceBatch) => boolean | void) {
    this.#id = id;
    this.#range = new SubtreeRange(treeSize);
    this.#emit = emit;
  }

  /** The event `seq` was accepted: linked to `prev`, with this hash and ts. */
  add(seq: number, prev: string, hash: string, ts: unknown): void {
    if (this.#count === 0) {
      this.#firstSeq = seq;
      this.#firstPrev = prev;
    }
    this.#range.appendEventHash(hash);
    this.#times.note(seq, ts);
    this.#count++;
    this.#lastHash = hash;
  }

  /** End the subtrees here (a checkpoint's size); true when the buffers could not take another run of them. */
  cut(): boolean {
    this.#subtrees += this.#range.take(this.#levels, this.#hashes, this.#subtrees);
    return this.#subtrees + RUN_SUBTREES > MAX_SUBTREES;
  }

  /** Hand over the batch so far (its buffers are the receiver's), if it has any event. */
  flush(): void {
    this.#subtrees += this.#range.take(this.#levels, this.#hashes, this.#subtrees);
    if (this.#count === 0) return;
    const batch: SliceBatch = {
      id: this.#id, kind: 'subtrees', firstSeq: this.#firstSeq, firstPrev: this.#firstPrev, lastHash: this.#lastHash,
      count: this.#count, subtrees: this.#subtrees, levels: this.#levels.buffer as ArrayBuffer,
      hashes: this.#hashes.buffer as ArrayBuffer, ts: this.#times.take(),
    };
    if (this.#emit(batch) === false) this.refused = true;
    this.#levels = new Uint8Array(MAX_SUBTREES);
    this.#hashes = Buffer.allocUnsafeSlow(MAX_SUBTREES * 32);
    this.#subtrees = 0;
    this.#count = 0;
  }
}

/**
 * Check the slice's rows, handing over each batch (its buffers are the receiver's) to `emit`;
 * `emit` returning false stops the slice there. Returns whether it stopped before the slice's
 * end (a row the fast path refused, an error, emit's false).
 */
export function checkSlice(db: BetterSqlite3.Database, task: SliceTask, opens: Opens | null, emit: (batch: SliceBatch) => boolean | void): boolean {
  const { accountId, after, cuts } = task;
  let expected = after === null ? 1 : after + 1;
  let prev: string | null = null;
  // The tree's size before this slice is its first seq - 1: the main thread takes a batch only then.
  const batches = new SliceBatches(task.id, expected - 1, emit);
  let cut = 0;
  let stopped = false;
  try {
    for (const r of sliceRows(db, task, task.pageRows)) {
      if (batches.refused) {
        stopped = true;
        break;
      }
      // The slice's first link is checked where its batch is taken; its form here, once, since
      // the row check takes prevHash as 64 lowercase hex (what every later link is: a hash).
      const p: unknown = prev ?? r[SLICE_ROW.prev_hash];
      const hash: string | null = typeof p === 'string' && (prev !== null || HEX64.test(p)) ? checkEventRowOfAccountHexPayload(r, expected, p, accountId, opens) : null;
      if (hash === null) {
        stopped = true;
        break;
      }
      batches.add(expected, p as string, hash, r[SLICE_ROW.ts]);
      prev = hash;
      if (cut < cuts.length && expected === cuts[cut]) {
        // A checkpoint's size: the main thread must land on it to compare the root there.
        cut++;
        if (batches.cut() || expected % BATCH === 0) batches.flush();
      } else if (expected % BATCH === 0) {
        batches.flush();
      }
      expected++;
    }
  } catch {
    stopped = true; // an I/O error: the reference path meets it again and reports it
  }
  batches.flush();
  return stopped || batches.refused;
}
