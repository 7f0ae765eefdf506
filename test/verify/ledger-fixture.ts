import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import { eventHash } from '../../src/core/event-hash.js';
import { EVENT_HEADER_FIELDS, GENESIS_PREV_HASH, type EventHeader } from '../../src/core/event-shape.js';
import { openContext, type AppContext } from '../../src/context.js';
import type { Checkpoint } from '../../src/ledger/checkpoints.js';
import { runCli, type CliResult } from '../helpers/server-process.js';
import { createTestStore, type StoreKind, type TestStore } from '../helpers/stores.js';

export const ACCOUNT = 'acme';

/** A real ledger made through the product's own append path, on a fresh store. */
export interface TestLedger {
  store: TestStore;
  context: AppContext;
  /** Appends n events to the account, each with a payload. */
  append(n: number, account?: string): Promise<void>;
  /** Signs a checkpoint now (the product path) and saves its JSON to a file, as an auditor would. */
  saveCheckpoint(name: string, account?: string): Promise<{ file: string; checkpoint: Checkpoint }>;
  file(name: string): string;
  /** A new context on the same store and keys, as a restarted service would open it. */
  reopen(): Promise<TestLedger>;
  close(): Promise<void>;
}

export async function createLedger(kind: StoreKind): Promise<TestLedger> {
  return attach(await createTestStore(kind));
}

async function attach(store: TestStore): Promise<TestLedger> {
  const context = await openContext(store.config);
  let closed = false;
  const ledger: TestLedger = {
    store,
    context,
    append: async (n, account = ACCOUNT) => {
      for (let i = 0; i < n; i++) {
        await context.store.transact((trx) => context.ledger.append(trx, {
          account_id: account, type: 'attempted', actor: 'prn_test', operation_id: `op_${i}`, idempotency_key: `key-${i}`,
          method: 'POST', route: '/v1/refunds', state: 'running', payload: { amount: 100 + i, note: 'refund' },
        }));
      }
    },
    saveCheckpoint: async (name, account = ACCOUNT) => {
      const checkpoint = await context.ledger.checkpoint(account);
      const file = ledger.file(name);
      fs.writeFileSync(file, JSON.stringify(checkpoint));
      return { file, checkpoint };
    },
    file: (name) => path.join(store.dataDir, name),
    reopen: () => attach(store),
    close: async () => {
      if (closed) return;
      closed = true;
      await context.close();
    },
  };
  return ledger;
}

/** A new, empty ledger, closed and dropped after the test. */
export async function openLedger(t: Pick<ExecutionContext, 'teardown'>, kind: StoreKind = 'sqlite'): Promise<TestLedger> {
  const ledger = await createLedger(kind);
  t.teardown(async () => {
    await ledger.close();
    await ledger.store.drop();
  });
  return ledger;
}

/** A ledger of `events` events in account acme, closed (ready for the CLI), dropped after the test. */
export async function closedLedger(t: ExecutionContext, events = 3, kind: StoreKind = 'sqlite'): Promise<TestLedger> {
  const ledger = await openLedger(t, kind);
  await ledger.append(events);
  await ledger.close();
  return ledger;
}

/**
 * Changes the first byte of one event's payload (`.run(seq)`). The byte is flipped, not set: set
 * to 0x00 it was a no-op on the one payload in 256 whose random nonce begins with 0x00, and the
 * "tampered" file then verified (a CI failure, 2026-12-03).
 */
export const FLIP_FIRST_PAYLOAD_BYTE = "UPDATE events SET payload = CAST((CASE WHEN substr(payload, 1, 1) = X'00' THEN X'01' ELSE X'00' END) || substr(payload, 2) AS BLOB) WHERE seq = ?";

/** What an attacker with write access to the file does: drop the append-only triggers, then edit. */
export function tamperSqlite(file: string, edit: (db: BetterSqlite3.Database) => void): void {
  const db = new BetterSqlite3(file);
  try {
    for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as Array<{ name: string }>) {
      db.exec(`DROP TRIGGER "${name}"`);
    }
    edit(db);
  } finally {
    db.close();
  }
}

export interface VerifyJson {
  ok: boolean;
  accounts: Array<{ account_id: string; events: number; checkpoints: number; first_bad_seq: number | null; reason: string | null; shredded: boolean }>;
}

/** The real binary, `gatehouse verify ... --json`, with its parsed report. */
export async function verifyJson(args: string[]): Promise<CliResult & { report: VerifyJson | null }> {
  const result = await runCli(['verify', ...args, '--json']);
  let report: VerifyJson | null = null;
  try {
    report = JSON.parse(result.stdout) as VerifyJson;
  } catch {
    report = null;
  }
  return { ...result, report };
}

/** NDJSON helpers for editing an export the way an attacker would. */
export function readLines(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
}

export function writeLines(file: string, lines: string[]): void {
  fs.writeFileSync(file, lines.map((l) => l + '\n').join(''));
}

/** One event's header as the database holds it. */
function headerAt(db: BetterSqlite3.Database, seq: number, account = ACCOUNT): EventHeader {
  return db.prepare(
    `SELECT ${EVENT_HEADER_FIELDS.join(', ')} FROM events WHERE account_id = ? AND seq = ?`,
  ).get(account, seq) as EventHeader;
}

/** Recompute every hash and link from `from` on, as a forger who edited event `from` would. */
export function rechain(db: BetterSqlite3.Database, from: number, account = ACCOUNT): void {
  let prev = from === 1 ? GENESIS_PREV_HASH : (db.prepare('SELECT hash FROM events WHERE account_id = ? AND seq = ?').pluck().get(account, from - 1) as string);
  const last = db.prepare('SELECT MAX(seq) FROM events WHERE account_id = ?').pluck().get(account) as number;
  for (let seq = from; seq <= last; seq++) {
    const hash = eventHash({ ...headerAt(db, seq, account), prev_hash: prev });
    db.prepare('UPDATE events SET prev_hash = ?, hash = ? WHERE account_id = ? AND seq = ?').run(prev, hash, account, seq);
    prev = hash;
  }
}
