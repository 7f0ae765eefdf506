#!/usr/bin/env node
/**
 * The floor of `gatehouse verify` on a SQLite ledger (bench/verify.ts runs it beside the
 * product): the least work this design lets a verifier do over the same file, and nothing
 * else, so a reader can see how far the product is from what the design allows here.
 *
 * What it does (all of it genuinely: a changed, missing or reordered event, a wrong payload,
 * a broken link, a wrong checkpoint root or signature makes it exit 1):
 * - reads the account's rows with raw better-sqlite3, the same 17 columns with the same SQL as
 *   the product's slices (src/verify/columns.ts EVENT_COLUMNS_OF_ACCOUNT: account_id checked
 *   in SQL, the payload as hex text), in pages of 256 by keyset as the product's slices do;
 * - per row: the expected seq, prev_hash = the previous event's hash, SHA-256 over the domain
 *   and the canonical (JCS) header equal to the stored hash, the payload's SHA-256 equal to
 *   payload_hash, the ts not going backwards counted, the RFC 6962 leaf and the Merkle nodes;
 * - the checkpoints: each note's Ed25519 signature (OpenSSL, node:crypto), its origin, size and
 *   root against its row, and the log's root at that size against it.
 *
 * How: the account's seq range is cut into aligned chunks of 2^14 events (so each full chunk
 * is one perfect subtree of the global tree: its root is the tree's own node) that this thread
 * and min(cores, 3) - 1 worker threads (the product's thread count) take from one shared
 * counter, so the threads stay busy to the end whatever their start-up costs. A chunk reports
 * its first prev_hash, last hash, its subtree roots and, at each checkpoint size inside it,
 * its compact range; this thread links the chunks and computes each checkpoint's root from the
 * chunks before it and that range (≤ ~20 node hashes per checkpoint).
 *
 * What it leaves out, on purpose: everything the product does to name a failure (it stops at
 * the first one and reports roughly where), any header that is not plain printable ASCII (it
 * reports such a header as a failure: it never accepts what it cannot hash exactly), accounts
 * other than the one whose chain head the file holds, cosignatures and witness policies, the
 * report, progress output, and the command line framework. Plain JavaScript (no tsx) so it
 * starts as fast as the built CLI does.
 *
 *   node bench/lean-verify.mjs DB_FILE DATA_DIR      → one JSON line; exit 0 intact, 1 not
 *   LEAN_VERIFY_THREADS=N   threads, this one included (default min(cores, 3), as the product)
 *   LEAN_VERIFY_CHUNK_LEVEL=L  chunks of 2^L events (default 14; tests use small ones)
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createPrivateKey, createPublicKey, hash, verify as edVerify } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

const PAGE = 256;
const GENESIS = '0'.repeat(64);
/** The product's slice columns (EVENT_COLUMNS_OF_ACCOUNT) and condition, written out. */
const COLUMNS = 'seq, ts, type, operation_id, idempotency_key, fingerprint, actor, agent_run_id, method, route, state, ' +
  "provider_ref, response_status, payload_hash, prev_hash, hash, CASE WHEN typeof(account_id) <> 'text' OR " +
  "account_id <> @account COLLATE BINARY THEN '-' ELSE CASE typeof(payload) WHEN 'blob' THEN hex(payload) " +
  "WHEN 'null' THEN NULL ELSE '-' END END";
const SEQ = 0, TS = 1, PAYLOAD_HASH = 13, PREV_HASH = 14, HASH = 15, PAYLOAD = 16;

// ---------------------------------------------------------------------------------------------
// One chunk, on any thread.

/**
 * The header's members in JCS order after account_id (whose value is fixed for the account and
 * written once, in the prefix), with their row positions and kinds: 0 text or null, 1 text,
 * 2 integer or null, 3 seq (known: it was compared with the expected one), 4 hex already
 * checked (prev_hash equals the previous hash; payload_hash equals the payload's digest, or is
 * null when there is no payload).
 */
const MEMBERS = [
  ['actor', 6, 0], ['agent_run_id', 7, 0], ['fingerprint', 5, 0], ['idempotency_key', 4, 0], ['method', 8, 0],
  ['operation_id', 3, 0], ['payload_hash', PAYLOAD_HASH, 4], ['prev_hash', PREV_HASH, 4], ['provider_ref', 11, 0],
  ['response_status', 12, 2], ['route', 9, 0], ['seq', SEQ, 3], ['state', 10, 0], ['ts', TS, 1], ['type', 2, 1],
];
const out = Buffer.alloc(16 * 1024);
let payloadScratch = Buffer.alloc(64 * 1024);
const leafScratch = Buffer.alloc(33); // [0] stays 0x00
const nodeScratch = Buffer.alloc(65);
nodeScratch[0] = 0x01;
const PREFIX = MEMBERS.map(([name]) => Buffer.from(`,"${name}":`, 'latin1'));
const KIND = MEMBERS.map((m) => m[2]);
const POS = MEMBERS.map((m) => m[1]);
let start = 0; // bytes of the fixed start: domain, `{"account_id":"<id>"`

export function setAccount(accountId) {
  start = out.write(`gatehouse:event:v1\n{"account_id":${JSON.stringify(accountId)}`, 0, 'utf8');
}

/** Copy a string JCS writes verbatim (printable ASCII, no quote or backslash); -1 otherwise. */
function copyPlain(s, at) {
  if (at + s.length + 64 > out.length) return -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return -1;
    out[at++] = c;
  }
  return at;
}

/** The event hash (hex) of a row, or null when a value is not of its kind or not plain ASCII. */
function headerHash(r) {
  let at = start;
  for (let k = 0; k < PREFIX.length; k++) {
    const p = PREFIX[k];
    for (let i = 0; i < p.length; i++) out[at++] = p[i];
    const v = r[POS[k]];
    const kind = KIND[k];
    if (v === null && kind !== 1 && kind !== 3) {
      out[at++] = 0x6e; out[at++] = 0x75; out[at++] = 0x6c; out[at++] = 0x6c;
    } else if (kind === 2 || kind === 3) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return null;
      at += out.write(String(v), at, 'latin1');
    } else if (kind === 4) {
      out[at++] = 0x22;
      at += out.write(v, at, 'latin1');
      out[at++] = 0x22;
    } else {
      if (typeof v !== 'string') return null;
      out[at++] = 0x22;
      at = copyPlain(v, at);
      if (at < 0) return null;
      out[at++] = 0x22;
    }
  }
  out[at++] = 0x7d;
  return hash('sha256', out.subarray(0, at), 'hex');
}

function nodeBin(left, right) {
  nodeScratch.write(left, 1, 32, 'latin1');
  nodeScratch.write(right, 33, 32, 'latin1');
  return hash('sha256', nodeScratch, 'latin1');
}

/**
 * Check chunk c: seqs (c·2^L, (c+1)·2^L], the first chunk from the first row in seq order, the
 * last to the end. Returns its summary, or { c, bad: { seq, reason } } at the first failure.
 */
export function checkChunk(db, accountId, c, level, chunks, checkpointSizes) {
  const size = 2 ** level;
  const lo = c * size;
  const first = c === 0;
  const last = c === chunks - 1;
  // The first chunk reads from the very first row in seq order, with no bound in SQL (so a NULL
  // or non-positive seq is seen, as the product's first slice sees it), and stops past its end.
  const where = `FROM events WHERE account_id = @account${first ? '' : ' AND seq > @lo'}${last || first ? '' : ' AND seq <= @hi'}`;
  const firstPage = db.prepare(`SELECT ${COLUMNS} ${where} ORDER BY seq LIMIT ${PAGE}`).raw(true);
  // Keyset paging as the product's slices: `seq >= last`, that row seen again and skipped, so a
  // second row with the same seq is not skipped.
  const nextPage = db.prepare(`SELECT ${COLUMNS} FROM events WHERE account_id = @account AND seq >= @from${last ? '' : ' AND seq <= @hi'} ORDER BY seq LIMIT ${PAGE + 1}`).raw(true);
  const params = { account: accountId, lo, hi: lo + size, from: 0 };
  let expected = lo + 1;
  let prev = null;
  let firstPrev = null;
  let lastTs = null;
  let firstTs = null;
  let tsBack = 0;
  /** The chunk's compact range, largest subtree first (it starts aligned: a plain frontier). */
  const stack = [];
  const snapshots = [];
  let cp = 0;
  while (cp < checkpointSizes.length && checkpointSizes[cp] <= lo) cp++;
  const bad = (seq, reason) => ({ c, bad: { seq, reason } });
  db.exec('BEGIN');
  try {
    let rows = firstPage.all(params);
    let skip = 0;
    pages: for (;;) {
      for (let i = skip; i < rows.length; i++) {
        const r = rows[i];
        if (first && !last && typeof r[SEQ] === 'number' && r[SEQ] > params.hi) break pages;
        if (r[SEQ] !== expected) return bad(expected, `expected seq ${expected}, found ${r[SEQ]}`);
        const p = r[PREV_HASH];
        if (prev === null) {
          // The chunk's first link is checked against the chunk before it, on this thread's merge.
          if (typeof p !== 'string' || !/^[0-9a-f]{64}$/.test(p)) return bad(expected, 'prev_hash is not a hash');
          firstPrev = p;
          firstTs = r[TS];
        } else if (p !== prev) {
          return bad(expected, 'prev_hash does not link');
        }
        const hex = r[PAYLOAD];
        const payloadHash = r[PAYLOAD_HASH];
        if (hex === null) {
          if (payloadHash !== null) return bad(expected, 'payload_hash without a payload');
        } else {
          if (typeof hex !== 'string' || hex.length % 2 !== 0 || typeof payloadHash !== 'string') return bad(expected, 'payload is not a blob of the account');
          const n = hex.length / 2;
          if (n > payloadScratch.length) payloadScratch = Buffer.alloc(n);
          if (payloadScratch.write(hex, 0, n, 'hex') !== n) return bad(expected, 'payload is not a blob of the account');
          if (hash('sha256', payloadScratch.subarray(0, n), 'hex') !== payloadHash) return bad(expected, 'payload does not match payload_hash');
        }
        const computed = headerHash(r);
        if (computed === null || computed !== r[HASH]) return bad(expected, 'hash does not match the header');
        const ts = r[TS];
        if (lastTs !== null && ts < lastTs) tsBack++;
        lastTs = ts;
        prev = computed;
        // The leaf, then the nodes it completes (local count before it: its set low bits).
        leafScratch.write(computed, 1, 32, 'hex');
        let h = hash('sha256', leafScratch, 'latin1');
        for (let k = expected - 1 - lo; k & 1; k >>>= 1) h = nodeBin(stack.pop(), h);
        stack.push(h);
        if (expected === checkpointSizes[cp]) {
          snapshots.push([expected, stack.slice()]);
          cp++;
        }
        expected++;
      }
      if (rows.length < PAGE + skip) break;
      params.from = rows[rows.length - 1][SEQ];
      rows = nextPage.all(params);
      if (rows.length === 0 || rows[0][SEQ] !== params.from) return bad(expected, 'the rows changed between two pages');
      skip = 1;
    }
  } finally {
    db.exec('COMMIT');
  }
  return { c, firstSeq: lo + 1, count: expected - 1 - lo, firstPrev, lastHash: prev, stack, snapshots, firstTs, lastTs, tsBack };
}

/** Take chunks from the shared counter until none is left, handing each summary to `done`. */
function takeChunks(task, counter, done) {
  const db = new Database(task.file, { readonly: true, fileMustExist: true });
  db.pragma('cache_size = -2048'); // one pass in seq order reuses no page (as the product's workers)
  setAccount(task.accountId);
  for (let c = Atomics.add(counter, 0, 1); c < task.chunks; c = Atomics.add(counter, 0, 1)) {
    const result = checkChunk(db, task.accountId, c, task.level, task.chunks, task.checkpointSizes);
    done(result);
    if (result.bad) Atomics.store(counter, 0, task.chunks); // stop everyone
  }
  db.close();
}

if (!isMainThread) {
  const { task, shared } = workerData;
  takeChunks(task, new Int32Array(shared), (r) => parentPort.postMessage(r));
  parentPort.postMessage({ end: true });
}

// ---------------------------------------------------------------------------------------------
// The main thread: checkpoints, the chunks it takes itself, the merge.

/** Ed25519 public key of a 32-byte seed (PKCS#8 wrapping of the seed, as libsodium derives it). */
function publicKeyOfSeed(seed) {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  return createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
}

/** The root (hex) of a compact range given largest subtree first. */
function rootOf(subtrees) {
  if (subtrees.length === 0) return hash('sha256', '', 'hex');
  let r = subtrees[subtrees.length - 1];
  for (let i = subtrees.length - 2; i >= 0; i--) r = nodeBin(subtrees[i], r);
  return Buffer.from(r, 'latin1').toString('hex');
}

/** Checks every checkpoint note; returns size → root hex, or a failure. */
function checkCheckpoints(rows, publicKey, keyName, origin) {
  const roots = new Map();
  for (const { tree_size: size, root_hash: rootHex, note } of rows) {
    const split = note.lastIndexOf('\n\n');
    const body = note.slice(0, split + 1);
    let signed = false;
    for (const line of note.slice(split + 2).split('\n')) {
      if (!line.startsWith(`\u2014 ${keyName} `)) continue;
      const blob = Buffer.from(line.slice(keyName.length + 3), 'base64');
      signed = blob.length === 68 && edVerify(null, Buffer.from(body, 'utf8'), publicKey, blob.subarray(4));
    }
    const [o, sizeText, rootB64] = body.slice(0, -1).split('\n');
    if (!signed || o !== origin || sizeText !== String(size) || Buffer.from(rootB64, 'base64').toString('hex') !== rootHex) {
      return { bad: { seq: size, reason: `checkpoint at size ${size} is not signed as stored` } };
    }
    roots.set(size, rootHex);
  }
  return { roots };
}

async function main() {
  const [file, dataDir] = process.argv.slice(2);
  const threads = Number(process.env.LEAN_VERIFY_THREADS || Math.min(os.availableParallelism(), 3));
  const level = Number(process.env.LEAN_VERIFY_CHUNK_LEVEL || 14);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const ledgerId = db.prepare("SELECT value FROM meta WHERE key = 'ledger_id'").pluck().get();
  const accountId = db.prepare('SELECT account_id FROM chains').pluck().get();
  const maxSeq = db.prepare('SELECT MAX(seq) FROM events WHERE account_id = ?').pluck().get(accountId) ?? 0;
  const checkpoints = db.prepare('SELECT tree_size, root_hash, note FROM checkpoints WHERE account_id = ? ORDER BY tree_size').all(accountId);
  const chunks = Math.max(1, Math.ceil(maxSeq / 2 ** level));
  const task = { file, accountId, level, chunks, checkpointSizes: checkpoints.map((c) => c.tree_size) };
  const shared = new SharedArrayBuffer(4);
  const counter = new Int32Array(shared);
  const results = new Array(chunks);
  let failure = null;
  const note = (r) => {
    if (r.bad) { if (failure === null || r.bad.seq < failure.seq) failure = r.bad; } else results[r.c] = r;
  };
  const ended = [];
  for (let w = 0; w < Math.min(threads, chunks) - 1; w++) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { task, shared } });
    ended.push(new Promise((resolve, reject) => {
      worker.on('message', (m) => (m.end ? resolve() : note(m)));
      worker.on('error', reject);
      worker.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exit ${code}`))));
    }));
  }
  // While the workers start: the signatures.
  const seed = Buffer.from(fs.readFileSync(path.join(dataDir, 'signing.key'), 'utf8').trim(), 'base64');
  const keyName = `gatehouse/${ledgerId}`;
  const trusted = checkCheckpoints(checkpoints, publicKeyOfSeed(seed), keyName, `${keyName}/${accountId}`);
  if (trusted.bad) failure = trusted.bad;
  takeChunks(task, counter, note);
  await Promise.all(ended);

  // The merge: links between chunks, the tree over their roots, the root at every checkpoint.
  let prev = GENESIS;
  let lastTs = null;
  let tsBack = 0;
  const frontier = []; // [level, root] of the chunks taken, largest first
  for (let c = 0; c < chunks && failure === null; c++) {
    const r = results[c];
    const want = Math.min(2 ** level, maxSeq - c * 2 ** level);
    if (r === undefined || r.count !== want) { failure = { seq: c * 2 ** level + 1, reason: 'chunk missing events' }; break; }
    if (r.firstPrev !== prev) { failure = { seq: r.firstSeq, reason: 'prev_hash does not link' }; break; }
    for (const [size, stack] of r.snapshots) {
      if (rootOf([...frontier.map((f) => f[1]), ...stack]) !== trusted.roots.get(size)) {
        failure = { seq: size, reason: `the log's root at size ${size} is not the checkpoint's` };
        break;
      }
    }
    if (lastTs !== null && r.firstTs < lastTs) tsBack++;
    tsBack += r.tsBack;
    lastTs = r.lastTs;
    prev = r.lastHash;
    if (c < chunks - 1) {
      // A full chunk is one perfect subtree at `level`: merge it into the frontier.
      let h = r.stack[0];
      let l = level;
      while (frontier.length > 0 && frontier[frontier.length - 1][0] === l) h = nodeBin(frontier.pop()[1], h), l++;
      frontier.push([l, h]);
    }
  }
  if (failure === null && checkpoints.some((c) => c.tree_size > maxSeq)) failure = { seq: maxSeq + 1, reason: 'a checkpoint is beyond the log' };
  const ok = failure === null;
  process.stdout.write(JSON.stringify({ ok, account: accountId, events: maxSeq, checkpoints: checkpoints.length, threads, ts_backwards: tsBack, failure }) + '\n');
  process.exitCode = ok ? 0 : 1;
}

// Run as a program (not when a harness imports checkChunk to time it in process).
if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
