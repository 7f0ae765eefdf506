/**
 * Incident review at scale: an account with 1,000,000 operations (and a second, smaller one),
 * generated straight into the schema like the verify bench's ledger, then the first page of
 * every search filter and of the duplicates report through the real HTTP service, p50 and
 * p99 over sequential requests, on SQLite and PostgreSQL; and each query's plan, to show the
 * index it reads. Target (issue 12): p99 ≤ 50 ms for every first page.
 *
 * The fixture is the product's schema (migrations, triggers). Every terminal operation points
 * at one of 1000 real sealed response events, so each listed operation decrypts its stored
 * response as in production. On SQLite the operations go in through the fingerprint trigger;
 * on PostgreSQL they are generated in the database (generate_series) with the trigger off and
 * fingerprint_repeats filled afterwards with the migration's own backfill query.
 *
 *   npx tsx bench/review.ts [operations]     (default 1,000,000; SQLite fixture cached in bench/results/)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { openContext } from '../src/context.js';
import { readConfig } from '../src/config/config.js';
import { startServer } from '../src/http/server.js';
import { canonicalBytes } from '../src/core/jcs.js';
import { sha256Hex } from '../src/core/hash.js';
import { generateKey, sealPayload, wrapDataKey } from '../src/core/seal.js';
import { loadSodium } from '../src/core/sodium.js';
import { openStore } from '../src/store/open-store.js';
import { parseSearchParams } from '../src/operations/search-params.js';
import { searchSelect } from '../src/operations/search.js';
import { parseDuplicatesParams } from '../src/operations/duplicates-params.js';
import { candidatesSelect } from '../src/operations/duplicates.js';
import type { Store } from '../src/store/store.js';
import { adminQuery, defaultPostgresAdminUrl } from './http-claims.js';

const ACCOUNT = 'acme';
const RESPONSES = 1000;
const START = Date.parse('2025-01-01T00:00:00.000Z');
const STEP_MS = 2600; // a million operations span 30 days
const SYNC_EVERY = 33_230; // about once a day: one fingerprint repeated daily, far outside any window
const PG_ADMIN = defaultPostgresAdminUrl();

export interface ReviewBenchResult {
  operations: number;
  requests_per_query: number;
  sqlite: StoreResult;
  postgres: StoreResult | { skipped: string };
}

interface StoreResult {
  fixture_seconds: number;
  queries: Record<string, { p50_ms: number; p99_ms: number; items: number; plan: string }>;
  all_within_50ms_p99: boolean;
}

/** Operation i of the fixture, as column values (the PostgreSQL generator mirrors this in SQL). */
function operation(i: number, account = ACCOUNT) {
  const dupOfPrevious = i % 1000 === 999;
  const fingerprint = i % SYNC_EVERY === 0 ? sha256Hex(`${account}:daily-sync`) : sha256Hex(`${account}:fp-${dupOfPrevious ? i - 1 : i}`);
  const state = i % 1000 === 500 ? 'unknown' : i % 20 === 3 ? 'failed' : 'succeeded';
  const terminal = state !== 'unknown';
  const createdAt = new Date(START + i * STEP_MS).toISOString();
  return {
    id: `op_${account}_${i.toString(36).padStart(8, '0')}`, account_id: account, idempotency_key: `key-${i}`, fingerprint,
    method: i % 100 < 90 ? 'POST' : i % 100 < 97 ? 'PUT' : 'DELETE',
    route: i % 10 < 4 ? '/v1/refunds' : i % 10 < 7 ? `/v1/tickets/T-${i}` : `/v1/customers/C-${i % 5000}/notes`,
    state, business_key: i % 10 === 0 ? `order-${i}` : null, exclusive_scope: null, agent_run_id: `run-${Math.floor(i / 10)}`,
    provider_ref: null, requested_by: 'prn_bench', lease_seconds: 60, lease_token_hash: null, lease_expires_at: null,
    response_seq: terminal ? 1 + (i % RESPONSES) : null, response_status: terminal ? 201 : null, approval_id: null,
    created_at: createdAt, updated_at: createdAt, version: 1,
  };
}

async function sealedResponses(masterKey: Buffer) {
  const sodium = await loadSodium();
  const dataKey = generateKey(sodium);
  const wrapped = Buffer.from(wrapDataKey(sodium, masterKey, ACCOUNT, dataKey));
  const events = [];
  for (let seq = 1; seq <= RESPONSES; seq++) {
    const payload = Buffer.from(sealPayload(sodium, dataKey, ACCOUNT, seq, canonicalBytes({ outcome: 'succeeded', response: { status: 201, body: { refund_id: `re_${seq}` } } })));
    events.push({
      account_id: ACCOUNT, seq, ts: new Date(START + seq).toISOString(), type: 'completed', operation_id: null, idempotency_key: null, fingerprint: null,
      actor: 'prn_bench', agent_run_id: null, method: null, route: null, state: 'succeeded', provider_ref: null, response_status: 201,
      payload_hash: sha256Hex(payload), prev_hash: '0'.repeat(64), hash: sha256Hex(`bench-${seq}`), payload,
    });
  }
  return { wrapped, events };
}

function dataDir(name: string): { dir: string; masterKey: Buffer } {
  const dir = path.join(import.meta.dirname, 'results', name);
  fs.mkdirSync(dir, { recursive: true });
  for (const file of ['master.key', 'signing.key']) {
    if (!fs.existsSync(path.join(dir, file))) fs.writeFileSync(path.join(dir, file), crypto.randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
  }
  return { dir, masterKey: Buffer.from(fs.readFileSync(path.join(dir, 'master.key'), 'utf8').trim(), 'base64') };
}

async function sqliteFixture(total: number): Promise<{ dir: string; file: string; seconds: number }> {
  const { dir, masterKey } = dataDir(`review-${total}`);
  const file = path.join(dir, 'gatehouse.db');
  if (fs.existsSync(path.join(dir, 'complete'))) return { dir, file, seconds: 0 };
  const began = performance.now();
  fs.rmSync(file, { force: true });
  await (await openStore({ kind: 'sqlite', file })).close();
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const { wrapped, events } = await sealedResponses(masterKey);
  db.prepare('INSERT INTO accounts (id, wrapped_data_key, shredded_at, created_at) VALUES (?, ?, NULL, ?)').run(ACCOUNT, wrapped, new Date(START).toISOString());
  const columns = Object.keys(events[0]!);
  const insertEvent = db.prepare(`INSERT INTO events (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  db.transaction(() => events.forEach((e) => insertEvent.run(...Object.values(e))))();
  const opColumns = Object.keys(operation(0));
  const insert = db.prepare(`INSERT INTO operations (${opColumns.join(', ')}) VALUES (${opColumns.map(() => '?').join(', ')})`);
  const batch = db.transaction((from: number, to: number, account: string) => {
    for (let i = from; i < to; i++) insert.run(...Object.values(operation(i, account)));
  });
  for (let from = 0; from < total; from += 50_000) batch(from, Math.min(total, from + 50_000), ACCOUNT);
  batch(0, Math.min(total, 10_000), 'globex');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  fs.writeFileSync(path.join(dir, 'complete'), '');
  return { dir, file, seconds: (performance.now() - began) / 1000 };
}

/** The same rows generated inside PostgreSQL; the trigger is off while they go in, then the repeats are backfilled. */
async function postgresFixture(total: number): Promise<{ dir: string; url: string; seconds: number; drop: () => Promise<void> }> {
  const { dir, masterKey } = dataDir(`review-pg-${total}`);
  const database = `gh_bench_review_${crypto.randomBytes(4).toString('hex')}`;
  await adminQuery(PG_ADMIN, `CREATE DATABASE ${database}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${database}`;
  const began = performance.now();
  await (await openStore({ kind: 'postgres', url: url.toString() })).close();
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { wrapped, events } = await sealedResponses(masterKey);
    await client.query('INSERT INTO accounts (id, wrapped_data_key, shredded_at, created_at) VALUES ($1, $2, NULL, $3)', [ACCOUNT, wrapped, new Date(START).toISOString()]);
    const columns = Object.keys(events[0]!);
    for (const e of events) await client.query(`INSERT INTO events (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`, Object.values(e));
    await client.query('ALTER TABLE operations DISABLE TRIGGER operations_fingerprint_repeat');
    for (const [account, count] of [[ACCOUNT, total], ['globex', Math.min(total, 10_000)]] as const) {
      await client.query(GENERATE_SQL, [account, count, START, STEP_MS, SYNC_EVERY, RESPONSES]);
    }
    await client.query(`INSERT INTO fingerprint_repeats (account_id, operation_id, fingerprint, created_at, gap_ms)
      SELECT account_id, id, fingerprint, created_at, greatest(0, round(extract(epoch FROM (created_at::timestamptz - previous::timestamptz)) * 1000))::bigint
      FROM (SELECT account_id, id, fingerprint, created_at, lag(created_at) OVER (PARTITION BY account_id, fingerprint ORDER BY created_at, id) AS previous FROM operations) o
      WHERE previous IS NOT NULL`);
    await client.query('ALTER TABLE operations ENABLE TRIGGER operations_fingerprint_repeat');
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
  return { dir, url: url.toString(), seconds: (performance.now() - began) / 1000, drop: () => adminQuery(PG_ADMIN, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`) };
}

// operation(i) in SQL: sha256 over the same text, so fingerprints agree with the SQLite fixture.
const GENERATE_SQL = `
INSERT INTO operations (id, account_id, idempotency_key, fingerprint, method, route, state, business_key, exclusive_scope, agent_run_id,
  provider_ref, requested_by, lease_seconds, lease_token_hash, lease_expires_at, response_seq, response_status, approval_id, created_at, updated_at, version)
SELECT 'op_' || $1 || '_' || lpad(i::text, 8, '0'), $1, 'key-' || i,
  encode(sha256(convert_to(CASE WHEN i % $5 = 0 THEN $1 || ':daily-sync' ELSE $1 || ':fp-' || (CASE WHEN i % 1000 = 999 THEN i - 1 ELSE i END) END, 'UTF8')), 'hex'),
  CASE WHEN i % 100 < 90 THEN 'POST' WHEN i % 100 < 97 THEN 'PUT' ELSE 'DELETE' END,
  CASE WHEN i % 10 < 4 THEN '/v1/refunds' WHEN i % 10 < 7 THEN '/v1/tickets/T-' || i ELSE '/v1/customers/C-' || (i % 5000) || '/notes' END,
  st, CASE WHEN i % 10 = 0 THEN 'order-' || i END, NULL, 'run-' || (i / 10), NULL, 'prn_bench', 60, NULL, NULL,
  CASE WHEN st <> 'unknown' THEN 1 + i % $6 END, CASE WHEN st <> 'unknown' THEN 201 END, NULL, ts, ts, 1
FROM (SELECT i, to_char(to_timestamp(($3::bigint + i::bigint * $4) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ts,
        CASE WHEN i % 1000 = 500 THEN 'unknown' WHEN i % 20 = 3 THEN 'failed' ELSE 'succeeded' END AS st
      FROM generate_series(0, $2::int - 1) AS i) g`;

/** The questions of an incident review, each as the first page a reader asks for. */
function queries(total: number): Record<string, string> {
  const mid = Math.floor(total / 2);
  const midOp = operation(mid);
  const hourFrom = new Date(START + mid * STEP_MS).toISOString();
  const hourTo = new Date(START + mid * STEP_MS + 3600_000).toISOString();
  return {
    'all, newest first': '',
    'all, oldest first': 'order=asc',
    agent_run_id: `agent_run_id=run-${Math.floor(mid / 10)}`,
    business_key: `business_key=order-${mid - (mid % 10)}`,
    fingerprint: `fingerprint=${midOp.fingerprint}`,
    idempotency_key: `idempotency_key=key-${mid}`,
    'method (3 %)': 'method=DELETE',
    'route exact (40 %)': 'route=/v1/refunds',
    'route pattern (30 %)': `route=${encodeURIComponent('/v1/tickets/*')}`,
    'state=unknown (0.1 %)': 'state=unknown',
    'since/until (one hour)': `since=${hourFrom}&until=${hourTo}`,
    'duplicates (600 s)': 'DUP:',
    'duplicates (60 s, one day)': `DUP:window_seconds=60&since=${hourFrom}&until=${new Date(Date.parse(hourFrom) + 86_400_000).toISOString()}`,
  };
}

async function measure(kind: 'sqlite' | 'postgres', total: number, requests: number, log: (line: string) => void): Promise<StoreResult> {
  const fixture = kind === 'sqlite' ? await sqliteFixture(total) : await postgresFixture(total);
  log(`${kind}: fixture of ${total} operations ready (${fixture.seconds.toFixed(0)} s)`);
  const config = readConfig(kind === 'sqlite' ? { dataDir: fixture.dir, db: (fixture as { file: string }).file } : { dataDir: fixture.dir, databaseUrl: (fixture as { url: string }).url }, { GATEHOUSE_LOG_LEVEL: 'silent' });
  const context = await openContext(config);
  const server = await startServer(context, { host: '127.0.0.1', port: 0, maxBodyBytes: 1 << 20 });
  const result: StoreResult = { fixture_seconds: Math.round(fixture.seconds), queries: {}, all_within_50ms_p99: true };
  try {
    const { key } = await context.principals.create({ account_id: 'audit', roles: ['auditor'] });
    for (const [name, query] of Object.entries(queries(total))) {
      const duplicates = query.startsWith('DUP:');
      const params = duplicates ? query.slice(4) : query;
      const url = `${server.url}${duplicates ? '/v1/review/duplicates' : '/v1/operations'}?account_id=${ACCOUNT}${params ? `&${params}` : ''}`;
      const times: number[] = [];
      let items = 0;
      for (let n = 0; n < requests + 5; n++) {
        const began = performance.now();
        const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
        const body = await response.json() as { items: unknown[] };
        if (response.status !== 200) throw new Error(`${name}: ${response.status} ${JSON.stringify(body)}`);
        if (n >= 5) times.push(performance.now() - began);
        items = body.items.length;
      }
      times.sort((a, b) => a - b);
      const p = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 10) / 10;
      const plan = await explain(context.store, kind, duplicates, params);
      result.queries[name] = { p50_ms: p(0.5), p99_ms: p(0.99), items, plan };
      if (p(0.99) > 50) result.all_within_50ms_p99 = false;
      log(`${kind}: ${name}: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, ${items} items; plan: ${plan}`);
    }
  } finally {
    await server.close();
    await context.close();
    if ('drop' in fixture) await fixture.drop();
  }
  return result;
}

/** The plan of the page's main query, one line (SQLite's EXPLAIN QUERY PLAN details, PostgreSQL's EXPLAIN node lines). */
async function explain(store: Store, kind: 'sqlite' | 'postgres', duplicates: boolean, params: string): Promise<string> {
  const raw = Object.fromEntries(new URLSearchParams(`account_id=${ACCOUNT}&${params}`));
  const compiled = duplicates
    ? (() => { const q = parseDuplicatesParams(raw); return candidatesSelect(store.db, ACCOUNT, q, q.windowSeconds * 1000, null).compile(); })()
    : searchSelect(store, ACCOUNT, parseSearchParams(raw)).compile();
  const { rows } = await store.db.executeQuery({ ...compiled, sql: `EXPLAIN ${kind === 'sqlite' ? 'QUERY PLAN ' : ''}${compiled.sql}` } as never) as { rows: Array<Record<string, unknown>> };
  return rows.map((row) => String(row.detail ?? row['QUERY PLAN'])).map((line) => line.trim()).join(' | ');
}

export async function benchReview(options: { operations?: number; requests?: number; log?: (line: string) => void } = {}): Promise<ReviewBenchResult> {
  const total = options.operations ?? 1_000_000;
  const requests = options.requests ?? 200;
  const log = options.log ?? ((line: string) => process.stderr.write(`[review] ${line}\n`));
  const sqlite = await measure('sqlite', total, requests, log);
  let postgres: ReviewBenchResult['postgres'];
  try {
    await adminQuery(PG_ADMIN, 'SELECT 1');
    postgres = await measure('postgres', total, requests, log);
  } catch (error) {
    postgres = { skipped: (error as Error).message };
    log(`postgres skipped: ${(error as Error).message}`);
  }
  return { operations: total, requests_per_query: requests, sqlite, postgres };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const total = Number(process.argv[2] ?? 1_000_000);
  process.stdout.write(JSON.stringify(await benchReview({ operations: total }), null, 2) + '\n');
}
