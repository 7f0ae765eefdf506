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
// The same for a lease holder's `sent` and `completed` reports (the floor of a report, and with the
// claim, of a claim → sent → completed cycle) and for a replay (the floor of a replay).
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
import { constantTimeEqual, sha256Hex } from '../src/core/hash.js';
import { newId } from '../src/core/ids.js';
import { randomBytes } from '../src/core/random.js';
import type { JsonValue } from '../src/core/json.js';
import { MerkleFrontier } from '../src/core/merkle.js';
import { openPayload, sealPayload } from '../src/core/seal.js';
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
  /**
   * A lease holder's `sent` or `completed` report on the operation `id` of `account`: the durable
   * work of the product's report path (operations/reports.ts) and nothing else — the row read by
   * its id, the lease token checked against its hash, the report's digest looked up (an identical
   * repeat answers as the first did), the event appended (`completed` seals the response into it),
   * the row updated on its version, the report's digest stored. Answered once its batch committed.
   */
  report(id: string, body: LeanReport, account?: string): Promise<unknown>;
  /**
   * A replay: the claim of `body` again under a `key` whose operation succeeded. The durable work
   * of the product's replay and nothing else: the fingerprint, the operation row read by its key,
   * the `replayed` event appended (hashed, chained, the frontier advanced, the head written), the
   * stored response read and opened. Answered once its batch committed.
   */
  replay(key: string, body: Record<string, JsonValue>, account?: string): Promise<unknown>;
  /** Whether `key` names an operation completed through this process: the lean server's replay routing. */
  completed(key: string, account?: string): boolean;
  close(): void;
}

/** The reports of a claim → sent → completed cycle, as the product's report route takes them. */
export type LeanReport =
  | { type: 'sent'; lease_token: string }
  | { type: 'completed'; lease_token: string; outcome: 'succeeded' | 'failed'; response: { status: number; [member: string]: JsonValue } };

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
  const selectOperation = db.prepare('SELECT * FROM operations WHERE account_id = ? AND idempotency_key = ?');
  const selectOperationById = db.prepare('SELECT * FROM operations WHERE account_id = ? AND id = ?');
  const updateOperation = db.prepare('UPDATE operations SET state = ?, response_status = ?, response_seq = ?, updated_at = ?, version = version + 1 WHERE account_id = ? AND id = ? AND version = ?');
  const selectReport = db.prepare('SELECT digest FROM operation_reports WHERE operation_id = ? AND digest = ?');
  const insertReport = db.prepare('INSERT INTO operation_reports (operation_id, digest, account_id, type) VALUES (?, ?, ?, ?)');
  const selectPayload = db.prepare('SELECT payload FROM events WHERE account_id = ? AND seq = ?');
  const completedKeys = new Set<string>();
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

  /** One request's work inside the batch's transaction; its answer is given after the COMMIT. */
  interface Unit { work: () => unknown; done: (error: unknown, answer?: unknown) => void }
  const queue: Unit[] = [];
  let draining = false;

  function enqueue(work: () => unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      queue.push({ work, done: (error, answer) => (error ? reject(error) : resolve(answer)) });
      if (!draining) {
        draining = true;
        setImmediate(drain);
      }
    });
  }

  interface Claim { key: string; body: Record<string, JsonValue>; account: string }
  const claim = (key: string, body: Record<string, JsonValue>, account = 'acme') => enqueue(() => write({ key, body, account }));

  /** What a claim's body says, and its fingerprint in `account`: a claim and its replays compute it alike. */
  function intentOf(body: Record<string, JsonValue>, account: string) {
    const { method, route, command, agent_run_id: agentRunId = null } = body as { method: string; route: string; command: JsonValue; agent_run_id?: string | null };
    return { method, route, command, agentRunId, fp: fingerprint({ account_id: account, method, route, command }) };
  }

  /** One claim's rows, inside the batch's transaction: the operation, its `attempted` event, the head. */
  function write(c: Claim): unknown {
    const now = Date.now();
    const { account } = c;
    const { method, route, command, agentRunId, fp } = intentOf(c.body, account);
    const id = newId('op', now);
    // The product's pooled randomness (core/random.ts): one system call per 4 KiB, not one per token.
    const token = randomBytes(32).toString('base64url');
    const leaseSeconds = typeof c.body.lease_seconds === 'number' ? c.body.lease_seconds : 60;
    const leaseEnds = now + leaseSeconds * 1000;
    const inserted = insertOperation.run(id, account, c.key, fp, method, route, agentRunId, ACTOR, leaseSeconds, sha256Hex(token), leaseEnds, rfc3339(now), rfc3339(now));
    if (inserted.changes !== 1) throw Object.assign(new Error('key taken'), { status: 409 });
    const { ts } = append(account, now, {
      type: 'attempted', operation_id: id, idempotency_key: c.key, fingerprint: fp, agent_run_id: agentRunId, method, route, state: 'running', response_status: null,
    }, command);
    return {
      outcome: 'created', execute: true,
      operation: { id, account_id: account, idempotency_key: c.key, fingerprint: fp, method, route, state: 'running', business_key: null, exclusive_scope: null, agent_run_id: agentRunId, provider_ref: null, created_at: ts, updated_at: ts },
      lease: { token, expires_at: rfc3339(leaseEnds) },
    };
  }

  /** The header members that say what an event is about; the rest are the chain's. */
  type EventAbout = Pick<EventHeader, 'type' | 'operation_id' | 'idempotency_key' | 'fingerprint' | 'agent_run_id' | 'method' | 'route' | 'state' | 'response_status'>;

  /** One event on the account's chain: sealed payload (if any), header hashed and chained, frontier advanced, row and head written. */
  function append(account: string, now: number, about: EventAbout, plaintext?: JsonValue): { seq: number; ts: string } {
    const chain = chainOf(account);
    const seq = chain.frontier.size + 1;
    const payload = plaintext === undefined ? null : Buffer.from(sealPayload(sodium, chain.dataKey, account, seq, canonicalBytes(plaintext)));
    const header: EventHeader = {
      seq, account_id: account, ts: rfc3339(now), ...about, actor: ACTOR, provider_ref: null,
      payload_hash: payload ? sha256Hex(payload) : null, prev_hash: chain.headHash,
    };
    const hash = eventHash(header);
    chain.frontier.appendEventHash(hash);
    insertEvent.run(...EVENT_HEADER_FIELDS.map((f) => header[f]), hash, payload);
    moveHead.run(seq, hash, JSON.stringify(chain.frontier.toJSON()), account, seq - 1);
    chain.headHash = hash;
    return { seq, ts: header.ts };
  }

  interface OperationRow {
    id: string; fingerprint: string; state: string; response_seq: number | null; response_status: number | null; agent_run_id: string | null;
    method: string; route: string; lease_token_hash: string | null; version: number; [column: string]: unknown;
  }
  function operationByKey(account: string, key: string): OperationRow {
    const row = selectOperation.get(account, key) as OperationRow | undefined;
    if (!row) throw Object.assign(new Error('no operation under this key'), { status: 404 });
    return row;
  }

  /** A report's durable work, as the product's reportEvent does it for `sent` and `completed`. */
  function reportOne(id: string, body: LeanReport, account: string): unknown {
    const now = Date.now();
    const row = selectOperationById.get(account, id) as OperationRow | undefined;
    if (!row) throw Object.assign(new Error(`no operation ${id}`), { status: 404 });
    if (row.lease_token_hash === null || !constantTimeEqual(sha256Hex(body.lease_token), row.lease_token_hash)) {
      throw Object.assign(new Error('lease lost'), { status: 409 });
    }
    const { lease_token: _token, ...data } = body;
    const digest = sha256Hex(canonicalBytes(data));
    if (selectReport.get(id, digest)) return operationJson(row);
    const allowed = body.type === 'sent' ? row.state === 'running' : row.state === 'sent' || row.state === 'accepted';
    if (!allowed) throw Object.assign(new Error(`a ${body.type} report is not allowed while ${row.state}`), { status: 409 });
    const state = body.type === 'sent' ? 'sent' : body.outcome;
    const status = body.type === 'completed' ? body.response.status : row.response_status;
    const { seq, ts } = append(account, now, {
      type: body.type, operation_id: id, idempotency_key: row.idempotency_key as string, fingerprint: row.fingerprint, agent_run_id: row.agent_run_id,
      method: row.method, route: row.route, state, response_status: status,
    }, body.type === 'completed' ? { outcome: body.outcome, response: body.response } : undefined);
    const responseSeq = body.type === 'completed' ? seq : row.response_seq;
    if (updateOperation.run(state, status, responseSeq, ts, account, id, row.version).changes !== 1) throw new Error(`operation ${id} changed under its report`);
    insertReport.run(id, digest, account, body.type);
    const answer = operationJson({ ...row, state, response_status: status, response_seq: responseSeq, updated_at: ts });
    if (body.type === 'completed') answer.response = body.response;
    return answer;
  }

  /** The operation's members in a report's or a replay's answer, as the product's operationJson; a terminal one's response is the caller's to add. */
  function operationJson(row: OperationRow): Record<string, unknown> {
    return {
      id: row.id, account_id: row.account_id, idempotency_key: row.idempotency_key, fingerprint: row.fingerprint, method: row.method, route: row.route,
      state: row.state, business_key: row.business_key, exclusive_scope: row.exclusive_scope, agent_run_id: row.agent_run_id,
      provider_ref: row.provider_ref, created_at: row.created_at, updated_at: row.updated_at,
    };
  }

  /** A replay's durable work, as the product's answerExisting does it for a succeeded operation. */
  function replayOne(key: string, body: Record<string, JsonValue>, account: string): unknown {
    const now = Date.now();
    const { method, route, agentRunId, fp } = intentOf(body, account);
    const row = operationByKey(account, key);
    if (row.fingerprint !== fp) throw Object.assign(new Error('fingerprint mismatch'), { status: 409 });
    if (row.state !== 'succeeded' || row.response_seq === null) throw Object.assign(new Error(`not replayable: ${row.state}`), { status: 409 });
    append(account, now, {
      type: 'replayed', operation_id: row.id, idempotency_key: key, fingerprint: fp, agent_run_id: agentRunId, method, route, state: row.state, response_status: row.response_status,
    });
    const sealed = (selectPayload.get(account, row.response_seq) as { payload: Buffer }).payload;
    const stored = JSON.parse(Buffer.from(openPayload(sodium, chainOf(account).dataKey, account, row.response_seq, sealed)).toString('utf8')) as { response: JsonValue };
    const operation = operationJson(row);
    operation.response = stored.response;
    return { outcome: 'replayed', execute: false, operation, response: stored.response };
  }

  function drain(): void {
    const batch = queue.splice(0, MAX_BATCH);
    const answers = new Map<Unit, { error?: unknown; answer?: unknown }>();
    before = new Map();
    try {
      begin.run();
      for (const unit of batch) {
        try {
          answers.set(unit, { answer: unit.work() });
        } catch (error) {
          answers.set(unit, { error });
        }
      }
      commit.run();
    } catch (error) {
      if (db.inTransaction) rollback.run();
      for (const [account, saved] of before) {
        if (saved) Object.assign(chains.get(account)!, saved);
        else chains.delete(account);
      }
      for (const unit of batch) answers.set(unit, { error });
    }
    for (const unit of batch) unit.done(answers.get(unit)!.error, answers.get(unit)!.answer);
    if (queue.length > 0) setImmediate(drain);
    else draining = false;
  }

  return {
    claim,
    report: async (id, body, account = 'acme') => {
      const answer = await enqueue(() => reportOne(id, body, account)) as { idempotency_key: string; state: string };
      if (body.type === 'completed') completedKeys.add(`${account}\0${answer.idempotency_key}`);
      return answer;
    },
    replay: (key, body, account = 'acme') => enqueue(() => replayOne(key, body, account)),
    completed: (key, account = 'acme') => completedKeys.has(`${account}\0${key}`),
    close: () => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
