/**
 * A worker thread of the parallel SQLite verify (see sqlite-slices.ts). It opens the file
 * read-only itself and checks one slice of an account's events at a time with
 * checkEventRowHexPayload (payloads read as hex text, which costs better-sqlite3 less than a
 * Buffer per BLOB) — the same checks ChainVerifier.addRow's fast path makes — against its predecessor in the
 * slice, and sends the roots of the perfect Merkle subtrees over the rows it accepted
 * (SubtreeRange), ended at every checkpoint size the slice names, in batches.
 * At the first row the fast path refuses (or any error) it stops the slice and says so: it
 * never decides what is wrong; the main thread re-reads from there with the reference path.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { checkEventRowHexPayload } from '../core/event-hash.js';
import { runTsWatch } from '../core/ts-order.js';
import { SubtreeRange } from '../core/merkle.js';
import { EVENT_COLUMNS_HEX_PAYLOAD, type SliceBatch, type SliceEnd, type SliceTask, sliceRows } from './sqlite-slices.js';

/**
 * A batch ends at every multiple of BATCH events (global sizes: the subtrees between two are
 * then one perfect subtree unless a checkpoint cuts them), or earlier when its buffers could
 * not take another run of subtrees (at most ~2 per level between two cuts).
 */
const BATCH = 8192;
const MAX_SUBTREES = 1024;
const RUN_SUBTREES = 2 * 53;

const port = parentPort!;
const db = new BetterSqlite3((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
// One pass in seq order reuses no page: a small cache (better-sqlite3's default is 16 MB per connection).
db.pragma('cache_size = -2048');

type Opens = (seq: number, payload: Uint8Array) => boolean;
/** libsodium is loaded only when payloads must be opened (--master-key). */
async function opener(accountId: string, dataKey: Uint8Array | null): Promise<Opens | null> {
  if (dataKey === null) return null;
  const { payloadOpens } = await import('../core/account-data-key.js');
  return (seq, payload) => payloadOpens(dataKey, accountId, seq, payload);
}
function runSlice(task: SliceTask, opens: Opens | null): void {
  const { id, accountId, after, cuts } = task;
  let expected = after === null ? 1 : after + 1;
  let prev: string | null = null;
  // The tree's size before this slice is its first seq - 1: the main thread takes a batch only then.
  const range = new SubtreeRange(expected - 1);
  let levels = new Uint8Array(MAX_SUBTREES);
  // Slow: its own ArrayBuffer, never Buffer's shared pool, since it is transferred.
  let hashes = Buffer.allocUnsafeSlow(MAX_SUBTREES * 32);
  let subtrees = 0;
  let n = 0;
  let firstSeq = expected;
  let firstPrev = '';
  let lastHash = '';
  let cut = 0;
  const times = runTsWatch();
  const flush = () => {
    subtrees += range.take(levels, hashes, subtrees);
    if (n === 0) return;
    const message: SliceBatch = {
      id, kind: 'subtrees', firstSeq, firstPrev, lastHash, count: n, subtrees,
      levels: levels.buffer as ArrayBuffer, hashes: hashes.buffer as ArrayBuffer, ts: times.take(),
    };
    port.postMessage(message, [levels.buffer as ArrayBuffer, hashes.buffer as ArrayBuffer]);
    levels = new Uint8Array(MAX_SUBTREES);
    hashes = Buffer.allocUnsafeSlow(MAX_SUBTREES * 32);
    subtrees = 0;
    n = 0;
  };
  let stopped = false;
  try {
    for (const r of sliceRows(db, task, EVENT_COLUMNS_HEX_PAYLOAD)) {
      const p: unknown = prev ?? r[15];
      const hash: string | null = typeof p === 'string' ? checkEventRowHexPayload(r, expected, p, accountId, opens) : null;
      if (hash === null) {
        stopped = true;
        break;
      }
      if (n === 0) {
        firstSeq = expected;
        firstPrev = p as string;
      }
      range.appendEventHash(hash);
      times.note(expected, r[2]);
      n++;
      lastHash = hash;
      prev = hash;
      if (expected === cuts[cut]) {
        // A checkpoint's size: the main thread must land on it to compare the root there.
        cut++;
        subtrees += range.take(levels, hashes, subtrees);
        if (expected % BATCH === 0 || subtrees + RUN_SUBTREES > MAX_SUBTREES) flush();
      } else if (expected % BATCH === 0) {
        flush();
      }
      expected++;
    }
  } catch {
    stopped = true; // an I/O error: the reference path meets it again and reports it
  }
  flush();
  const end: SliceEnd = { id, kind: 'end', stopped };
  port.postMessage(end);
}

// Tasks run one at a time in arrival order (the main thread sends the next only after 'end').
port.on('message', (task: SliceTask) => {
  opener(task.accountId, task.dataKey).then(
    (opens) => runSlice(task, opens),
    () => port.postMessage({ id: task.id, kind: 'end', stopped: true } satisfies SliceEnd),
  );
});
