/**
 * A worker thread of the parallel SQLite verify (see sqlite-slices.ts). It opens the path the
 * main thread opened, read-only, itself and checks one slice of an account's events at a time
 * (checkSlice, as the main thread checks its own), sending its batches of Merkle subtrees as
 * they fill. At the first row the fast path refuses (or any error) it stops the slice and says
 * so: it never decides what is wrong; the main thread re-reads from there with the reference
 * path.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { NO_DATA_KEY, type Opens, REFUSES_EVERY_PAYLOAD, payloadOpener, withSodium } from '../core/account-data-key.js';
import { type SliceAssignment, type SliceEnd, type SliceTask, checkSlice, sliceTaker } from './slice-check.js';
import { openLedgerDb } from './sqlite-file.js';

const port = parentPort!;
// The file, or the copy the main thread reads in its stead (sqlite-file.ts), opened as it opened it.
const db = openLedgerDb((workerData as { file: string }).file);
// One pass in seq order reuses no page: a small cache (better-sqlite3's default is 16 MB per connection).
db.pragma('cache_size = -2048');

/** libsodium is loaded only when payloads must be opened (--master-key) with a key. */
async function opener(accountId: string, dataKey: SliceTask['dataKey']): Promise<Opens | null> {
  if (dataKey === null) return null;
  return dataKey === NO_DATA_KEY ? REFUSES_EVERY_PAYLOAD : payloadOpener(await withSodium(dataKey), accountId);
}
function runSlice(task: SliceTask, opens: Opens | null): void {
  const stopped = checkSlice(db, task, opens, (batch) => port.postMessage(batch, [batch.levels, batch.hashes]));
  const end: SliceEnd = { id: task.id, kind: 'end', stopped };
  port.postMessage(end);
}

// One message: every slice and how to take them; the slices taken run one after another. The
// listener stays (not once()): it keeps the worker alive until the main thread ends it, so its
// 'exit' always means a failure there, never a worker that ran out of slices.
port.on('message', (assignment: SliceAssignment) => {
  const { slices } = assignment;
  const next = sliceTaker(assignment);
  const first = slices[0]!;
  opener(first.accountId, first.dataKey).then((opens) => {
    for (let i = next(); i < slices.length; i = next()) runSlice(slices[i]!, opens);
  }, () => {
    // No opener: every slice this worker takes ends at once, stopped.
    for (let i = next(); i < slices.length; i = next()) port.postMessage({ id: i, kind: 'end', stopped: true } satisfies SliceEnd);
  });
});
