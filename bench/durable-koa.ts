// The fairer ceiling for the HTTP claim benchmarks: a Koa server that, for every `POST /`, reads the
// JSON body, durably inserts one row into SQLite and answers `{}` with 201 — nothing else. A claim
// cannot answer before its event is on disk, so bare-koa.ts (no I/O at all) charges Gatehouse for the
// durability too; this one does exactly that one durable write, with Gatehouse's durability: WAL,
// synchronous=FULL, group commit (requests queue; one BEGIN IMMEDIATE … COMMIT per batch of whatever
// arrived, started on setImmediate; nobody is answered before their batch's COMMIT has returned).
// Raw better-sqlite3, nothing from src/, so the baseline does not move with our code. Run as a
// child process exactly like `gatehouse serve` and bare-koa.ts, its file in the same temp dir.
//
//   node --import=tsx bench/durable-koa.ts [--host 127.0.0.1] [--port 0]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import Koa from 'koa';
import { serveCeiling } from './ceiling-server.js';

const MAX_BATCH = 256; // as src/store/sqlite-store.ts
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-koa-'));
const db = new BetterSqlite3(path.join(dir, 'ceiling.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE writes (id INTEGER PRIMARY KEY, key TEXT UNIQUE, body BLOB)');
const insert = db.prepare('INSERT INTO writes (key, body) VALUES (?, ?)');
const [begin, commit, rollback] = ['BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK'].map((sql) => db.prepare(sql)) as [BetterSqlite3.Statement, BetterSqlite3.Statement, BetterSqlite3.Statement];

interface Pending { key: string; body: Buffer; done: (error: unknown) => void }
const queue: Pending[] = [];
let draining = false;

function write(key: string, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    queue.push({ key, body, done: (error) => (error ? reject(error) : resolve()) });
    if (!draining) {
      draining = true;
      setImmediate(drain);
    }
  });
}

/** One BEGIN IMMEDIATE … COMMIT (one fsync) per batch; everyone in it is answered after COMMIT returns. */
function drain(): void {
  const batch = queue.splice(0, MAX_BATCH);
  const failed = new Map<Pending, unknown>();
  try {
    begin.run();
    for (const p of batch) {
      try {
        insert.run(p.key, p.body);
      } catch (error) {
        failed.set(p, error); // e.g. a duplicate key: SQLite rolls back that statement, not the batch
      }
    }
    commit.run();
  } catch (error) {
    if (db.inTransaction) rollback.run();
    for (const p of batch) failed.set(p, error);
  }
  for (const p of batch) p.done(failed.get(p));
  // Let the event loop hand us every request that arrived during this fsync before the next batch.
  if (queue.length > 0) setImmediate(drain);
  else draining = false;
}

let counter = 0;
const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST') ctx.throw(405);
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  try { JSON.parse(body.toString('utf8')); } catch { ctx.throw(400, 'body is not JSON'); }
  try {
    await write(ctx.get('idempotency-key') || `auto-${counter++}`, body);
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') ctx.throw(409, 'key already written');
    throw error;
  }
  ctx.status = 201;
  ctx.body = {};
});
serveCeiling('durable koa', app, () => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
