/**
 * A worker thread of the parallel SQLite verify (see sqlite-slices.ts). It opens the file
 * read-only itself and checks one slice of an account's events at a time (checkSlice, as the
 * main thread checks its own), sending its batches of Merkle subtrees as they fill. At the
 * first row the fast path refuses (or any error) it stops the slice and says so: it never
 * decides what is wrong; the main thread re-reads from there with the reference path.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { type Opens, type SliceEnd, type SliceTask, checkSlice } from './slice-check.js';

const port = parentPort!;
const db = new BetterSqlite3((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
// One pass in seq order reuses no page: a small cache (better-sqlite3's default is 16 MB per connection).
db.pragma('cache_size = -2048');

/** libsodium is loaded only when payloads must be opened (--master-key). */
async function opener(accountId: string, dataKey: Uint8Array | null): Promise<Opens | null> {
  if (dataKey === null) return null;
  const { payloadOpens } = await import('../core/account-data-key.js');
  return (seq, payload) => payloadOpens(dataKey, accountId, seq, payload);
}
function runSlice(task: SliceTask, opens: Opens | null): void {
  const stopped = checkSlice(db, task, opens, (batch) => port.postMessage(batch, [batch.levels, batch.hashes]));
  const end: SliceEnd = { id: task.id, kind: 'end', stopped };
  port.postMessage(end);
}

// Tasks run one at a time in arrival order (the main thread sends the next only after 'end').
port.on('message', (task: SliceTask) => {
  opener(task.accountId, task.dataKey).then(
    (opens) => runSlice(task, opens),
    () => port.postMessage({ id: task.id, kind: 'end', stopped: true } satisfies SliceEnd),
  );
});
