/**
 * A large, correctly chained SQLite ledger for the verify benchmark, written straight into the
 * file with better-sqlite3 in big transactions. It is a fixture, not the product path: the
 * append path (store.transact, one fsync per group commit) would take an hour for a million
 * events; this uses the same core functions (event hash, sealing, Merkle frontier, signed
 * checkpoint notes), so what verify checks is exactly what the product writes.
 *
 * Cached under bench/results/ (git ignores it) and rebuilt only when missing.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openStore } from '../src/store/open-store.js';
import { eventHash } from '../src/core/event-hash.js';
import { EVENT_HEADER_FIELDS, EVENT_ROW_COLUMNS, type EventHeader, GENESIS_PREV_HASH } from '../src/core/event-shape.js';
import { canonicalBytes } from '../src/core/jcs.js';
import type { JsonValue } from '../src/core/json.js';
import { sha256Hex } from '../src/core/hash.js';
import { MerkleFrontier } from '../src/core/merkle.js';
import { STORED_LEVEL } from '../src/ledger/merkle-nodes.js';
import { generateKey, sealPayload, wrapDataKey } from '../src/core/seal.js';
import { signingKeyFromSeed } from '../src/core/signing-key.js';
import { loadSodium } from '../src/core/sodium.js';
import { signCheckpoint } from '../src/ledger/checkpoints.js';

export interface LedgerFixture {
  dataDir: string;
  dbFile: string;
  events: number;
  accountId: string;
}

const TYPES = ['attempted', 'leased', 'sent', 'accepted', 'completed'] as const;
const STATES = ['running', 'running', 'sent', 'accepted', 'succeeded'] as const;

export async function ledgerFixture(events: number, root = path.join(import.meta.dirname, 'results')): Promise<LedgerFixture> {
  const dataDir = path.join(root, `ledger-${events}`);
  const dbFile = path.join(dataDir, 'gatehouse.db');
  const fixture = { dataDir, dbFile, events, accountId: 'acme' };
  if (fs.existsSync(path.join(dataDir, 'complete'))) return fixture;
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const masterKey = crypto.randomBytes(32);
  const seed = crypto.randomBytes(32);
  fs.writeFileSync(path.join(dataDir, 'master.key'), masterKey.toString('base64') + '\n', { mode: 0o600 });
  fs.writeFileSync(path.join(dataDir, 'signing.key'), seed.toString('base64') + '\n', { mode: 0o600 });
  await (await openStore({ kind: 'sqlite', file: dbFile })).close(); // the real schema, triggers included
  await writeEvents(dbFile, fixture.accountId, events, masterKey, seed);
  fs.writeFileSync(path.join(dataDir, 'complete'), '');
  return fixture;
}

async function writeEvents(dbFile: string, accountId: string, total: number, masterKey: Uint8Array, seed: Uint8Array): Promise<void> {
  const sodium = await loadSodium();
  const db = new BetterSqlite3(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const ledgerId = crypto.randomBytes(8).toString('hex');
  const key = signingKeyFromSeed(seed, `gatehouse/${ledgerId}`);
  const dataKey = generateKey(sodium);
  const start = Date.parse('2025-01-01T00:00:00.000Z');
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run('ledger_id', ledgerId);
  db.prepare('INSERT INTO accounts (id, wrapped_data_key, shredded_at, created_at) VALUES (?, ?, NULL, ?)')
    .run(accountId, Buffer.from(wrapDataKey(sodium, masterKey, accountId, dataKey)), new Date(start).toISOString());
  const insert = db.prepare(
    `INSERT INTO events (${EVENT_ROW_COLUMNS.join(', ')}) VALUES (${EVENT_ROW_COLUMNS.map(() => '?').join(', ')})`,
  );
  const insertNode = db.prepare('INSERT INTO merkle_nodes (account_id, level, idx, hash) VALUES (?, ?, ?, ?)');
  const insertCheckpoint = db.prepare('INSERT INTO checkpoints (account_id, tree_size, root_hash, created_at, note) VALUES (?, ?, ?, ?, ?)');
  const frontier = new MerkleFrontier();
  let prev = GENESIS_PREV_HASH;
  const batch = db.transaction((from: number, to: number) => {
    for (let seq = from; seq <= to; seq++) {
      const step = (seq - 1) % 5;
      const op = Math.floor((seq - 1) / 5);
      const ts = new Date(start + seq * 7).toISOString();
      const body: JsonValue | null = step === 0
        ? { amount: 1000 + (op % 9000), currency: 'EUR', order_id: `ord_${op}`, reason: 'customer asked for a refund' }
        : step === 4 ? { status: 201, body: { refund_id: `re_${op}`, state: 'succeeded' } } : null;
      const payload = body === null ? null : Buffer.from(sealPayload(sodium, dataKey, accountId, seq, canonicalBytes(body)));
      const header: EventHeader = {
        seq, account_id: accountId, ts, type: TYPES[step]!, operation_id: `op_${op.toString(36).padStart(12, '0')}`,
        idempotency_key: `refund-${op}`, fingerprint: sha256Hex(`fp${op}`), actor: 'prn_gateway_01', agent_run_id: `run-${op % 97}`,
        method: 'POST', route: '/v1/refunds', state: STATES[step]!, provider_ref: step >= 3 ? `re_${op}` : null,
        response_status: step === 4 ? 201 : null, payload_hash: payload === null ? null : sha256Hex(payload), prev_hash: prev,
      };
      const hash = eventHash(header);
      insert.run(...EVENT_HEADER_FIELDS.map((f) => header[f]), hash, payload);
      prev = hash;
      // The subtree hashes the append path stores (merkle_nodes): proofs read them.
      for (const node of frontier.appendEventHashCollecting(hash, STORED_LEVEL)) insertNode.run(accountId, node.level, node.index, node.hash);
      if (seq % 1000 === 0 || seq === total) {
        const cp = signCheckpoint(key, ledgerId, accountId, seq, frontier.root(), ts);
        insertCheckpoint.run(accountId, cp.tree_size, cp.root_hash, cp.created_at, cp.note);
      }
    }
  });
  for (let from = 1; from <= total; from += 50_000) batch(from, Math.min(total, from + 49_999));
  db.prepare('INSERT INTO chains (account_id, size, head_hash, frontier, checkpoint_size) VALUES (?, ?, ?, ?, ?)')
    .run(accountId, total, prev, JSON.stringify(frontier.toJSON()), total);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
