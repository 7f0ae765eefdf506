// The floor of this design without HTTP: a new-key claim's durable work and nothing else, on raw
// better-sqlite3 prepared statements. It parses nothing (its caller does), computes the
// fingerprint (RFC 8785 + SHA-256), seals the command under the account's data key (XChaCha20-
// Poly1305), builds and hashes the event header, advances the Merkle frontier, and writes the same
// rows as the product — the operation, the `attempted` event, the chain head — on the product's own
// schema (its migrations), with the product's durability: WAL, synchronous=FULL, one BEGIN
// IMMEDIATE … COMMIT per batch of whatever arrived, nobody answered before their batch's COMMIT.
// What it leaves out is the way the product does it: no Kysely, no auth lookup, no policy match,
// no framework around the store. Each claim names its account (the product's takes it from the API
// key), and each account has its own chain and data key: spread over the four accounts of the
// product's load, a batch writes four chains and four ranges of every index, as the product's does
// (bench/lean-accounts.ts: on one account the same claims cost ~15-25 % less).
//
// Served behind Koa by bench/lean-claim.ts (the HTTP ceiling), called in-process by
// bench/claim-path.ts (the floor of "CPU per claim without HTTP").
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { canonicalBytes } from '../src/core/jcs.js';
import { eventHash } from '../src/core/event-hash.js';
import { EVENT_HEADER_FIELDS, EVENT_ROW_COLUMNS, GENESIS_PREV_HASH, type EventHeader } from '../src/core/event-shape.js';
import { fingerprint } from '../src/core/fingerprint.js';
import { sha256Hex } from '../src/core/hash.js';
import { newId } from '../src/core/ids.js';
import { randomBytes } from '../src/core/random.js';
import type { JsonValue } from '../src/core/json.js';
import { MerkleFrontier } from '../src/core/merkle.js';
import { sealPayload } from '../src/core/seal.js';
import { loadSodium } from '../src/core/sodium.js';
import { rfc3339 } from '../src/core/time.js';
import { openStore } from '../src/store/open-store.js';

const MAX_BATCH = 256; // as src/store/sqlite-store.ts
const ACTOR = 'prn_lean';

export interface LeanClaims {
  /**
   * A new-key claim of `body` ({ method, route, command, agent_run_id? }) under `key` in `account`
   * (its chain, its data key), answered once its batch committed.
   */
  claim(key: string, body: Record<string, JsonValue>, account?: string): Promise<unknown>;
  close(): void;
}

/**
 * What the floor is made of, measured by taking parts away; neither is a product option.
 * `withoutReview` drops what incident review (migration 0006) adds to every claim: six indexes on
 * operations and the fingerprint-repeat trigger. `synchronous` OFF leaves out each COMMIT's fsync.
 */
export interface LeanVariant {
  withoutReview?: boolean;
  synchronous?: 'FULL' | 'OFF';
}

/** Migration 0006's indexes on operations, and its trigger. */
const REVIEW_INDEXES = ['operations_created', 'operations_state_created', 'operations_agent_run_created', 'operations_fingerprint_created', 'operations_route_created', 'operations_method_created'];
const REVIEW_TRIGGER = 'operations_fingerprint_repeat';

export async function openLeanClaims(variant: LeanVariant = {}): Promise<LeanClaims> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lean-claim-'));
  const file = path.join(dir, 'gatehouse.db');
  // The product's schema, indexes and triggers, made by its own migrations.
  await (await openStore({ kind: 'sqlite', file })).close();

  const sodium = await loadSodium();
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${variant.synchronous ?? 'FULL'}`);
  // As the product (sqlite-store.ts): a statement journal (a trigger's statement needs one) in memory, not in a temp file.
  db.pragma('temp_store = MEMORY');
  if (variant.withoutReview) {
    for (const index of REVIEW_INDEXES) db.exec(`DROP INDEX ${index}`);
    db.exec(`DROP TRIGGER ${REVIEW_TRIGGER}`);
  }
  const [begin, commit, rollback] = ['BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK'].map((text) => db.prepare(text)) as [BetterSqlite3.Statement, BetterSqlite3.Statement, BetterSqlite3.Statement];
  const insertOperation = db.prepare(`INSERT INTO operations (id, account_id, idempotency_key, fingerprint, method, route, state, business_key,
    exclusive_scope, agent_run_id, provider_ref, requested_by, lease_seconds, lease_token_hash, lease_expires_at, response_seq, response_status,
    approval_id, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?, 'running', NULL, NULL, ?, NULL, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?, 1)
    ON CONFLICT DO NOTHING`);
  const insertEvent = db.prepare(`INSERT INTO events (${EVENT_ROW_COLUMNS.join(', ')}) VALUES (${EVENT_ROW_COLUMNS.map(() => '?').join(', ')})`);
  const moveHead = db.prepare('UPDATE chains SET size = ?, head_hash = ?, frontier = ? WHERE account_id = ? AND size = ?');
  const insertChain = db.prepare('INSERT INTO chains (account_id, size, head_hash, frontier, checkpoint_size) VALUES (?, 0, ?, ?, 0)');

  // Each account's chain head lives in memory, as the product's remembered heads do, and is written
  // on every event; its data key is made on first use, as the product's (which also stores it wrapped).
  interface Chain { frontier: MerkleFrontier; headHash: string; dataKey: Buffer }
  const chains = new Map<string, Chain>();
  /** The chains a batch changed, as they were before it: put back if it rolls back. */
  let before = new Map<string, { frontier: MerkleFrontier; headHash: string } | null>();
  function chainOf(account: string): Chain {
    let chain = chains.get(account);
    if (!before.has(account)) before.set(account, chain ? { frontier: chain.frontier.clone(), headHash: chain.headHash } : null);
    if (!chain) {
      insertChain.run(account, GENESIS_PREV_HASH, '[]');
      chains.set(account, (chain = { frontier: MerkleFrontier.from(0, []), headHash: GENESIS_PREV_HASH, dataKey: crypto.randomBytes(32) }));
    }
    return chain;
  }

  interface Claim { key: string; body: Record<string, JsonValue>; account: string; done: (error: unknown, answer?: unknown) => void }
  const queue: Claim[] = [];
  let draining = false;

  function claim(key: string, body: Record<string, JsonValue>, account = 'acme'): Promise<unknown> {
    return new Promise((resolve, reject) => {
      queue.push({ key, body, account, done: (error, answer) => (error ? reject(error) : resolve(answer)) });
      if (!draining) {
        draining = true;
        setImmediate(drain);
      }
    });
  }

  /** One claim's rows, inside the batch's transaction: the operation, its `attempted` event, the head. */
  function write(c: Claim): unknown {
    const now = Date.now();
    const { account } = c;
    const chain = chainOf(account);
    const { method, route, command, agent_run_id: agentRunId = null } = c.body as { method: string; route: string; command: JsonValue; agent_run_id?: string | null };
    const fp = fingerprint({ account_id: account, method, route, command });
    const id = newId('op', now);
    // The product's pooled randomness (core/random.ts): one system call per 4 KiB, not one per token.
    const token = randomBytes(32).toString('base64url');
    const leaseEnds = now + 60_000;
    const inserted = insertOperation.run(id, account, c.key, fp, method, route, agentRunId, ACTOR, 60, sha256Hex(token), leaseEnds, rfc3339(now), rfc3339(now));
    if (inserted.changes !== 1) throw Object.assign(new Error('key taken'), { status: 409 });
    const seq = chain.frontier.size + 1;
    const payload = Buffer.from(sealPayload(sodium, chain.dataKey, account, seq, canonicalBytes(command)));
    const header: EventHeader = {
      seq, account_id: account, ts: rfc3339(now), type: 'attempted', operation_id: id, idempotency_key: c.key, fingerprint: fp, actor: ACTOR,
      agent_run_id: agentRunId, method, route, state: 'running', provider_ref: null, response_status: null, payload_hash: sha256Hex(payload), prev_hash: chain.headHash,
    };
    const hash = eventHash(header);
    chain.frontier.appendEventHash(hash);
    insertEvent.run(...EVENT_HEADER_FIELDS.map((f) => header[f]), hash, payload);
    moveHead.run(seq, hash, JSON.stringify(chain.frontier.toJSON()), account, seq - 1);
    chain.headHash = hash;
    return {
      outcome: 'created', execute: true,
      operation: { id, account_id: account, idempotency_key: c.key, fingerprint: fp, method, route, state: 'running', business_key: null, exclusive_scope: null, agent_run_id: agentRunId, provider_ref: null, created_at: header.ts, updated_at: header.ts },
      lease: { token, expires_at: rfc3339(leaseEnds) },
    };
  }

  function drain(): void {
    const batch = queue.splice(0, MAX_BATCH);
    const answers = new Map<Claim, { error?: unknown; answer?: unknown }>();
    before = new Map();
    try {
      begin.run();
      for (const c of batch) {
        try {
          answers.set(c, { answer: write(c) });
        } catch (error) {
          answers.set(c, { error });
        }
      }
      commit.run();
    } catch (error) {
      if (db.inTransaction) rollback.run();
      for (const [account, saved] of before) {
        if (saved) Object.assign(chains.get(account)!, saved);
        else chains.delete(account);
      }
      for (const c of batch) answers.set(c, { error });
    }
    for (const c of batch) c.done(answers.get(c)!.error, answers.get(c)!.answer);
    if (queue.length > 0) setImmediate(drain);
    else draining = false;
  }

  return {
    claim,
    close: () => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
