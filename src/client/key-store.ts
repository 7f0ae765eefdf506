// The durable intent → idempotency key store. The key must be on disk before the first request
// that uses it: a process killed after the claim and restarted must find the same key, or a retry
// would mint a second key and execute the write twice.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';

// better-sqlite3 is a native module: it is loaded when the first SqliteKeyStore is made, not
// when gatehouse/client is imported, so a caller that keeps its keys elsewhere never loads it.
// It is CommonJS, so a synchronous require keeps the constructor synchronous.
const require = createRequire(import.meta.url);
let sqlite: typeof Database | undefined;
function openDatabase(path: string): Database.Database {
  sqlite ??= require('better-sqlite3') as typeof Database;
  return new sqlite(path);
}

export interface KeyStore {
  /** The intent's key, created and made durable first when the intent is new. */
  keyFor(intent: string): Promise<string>;
  /** The intent's key if one was ever created. */
  get(intent: string): Promise<string | undefined>;
  close(): Promise<void> | void;
}

/** A fresh idempotency key (visible ASCII, well under the contract's 255 characters). */
export function newIdempotencyKey(): string {
  return `ik_${randomUUID()}`;
}

/**
 * SQLite file (better-sqlite3, WAL, `synchronous=FULL`): the row is fsynced before `keyFor`
 * resolves. Several processes may share the file; the primary key makes concurrent first uses of
 * one intent agree on one key.
 */
export class SqliteKeyStore implements KeyStore {
  readonly path: string;
  readonly #db: Database.Database;
  readonly #insert: Database.Statement<[string, string, string]>;
  readonly #select: Database.Statement<[string], { idempotency_key: string }>;

  constructor(path: string) {
    this.path = path;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.#db = openDatabase(path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(`CREATE TABLE IF NOT EXISTS intent_keys (
      intent TEXT PRIMARY KEY,
      idempotency_key TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL
    )`);
    this.#insert = this.#db.prepare('INSERT INTO intent_keys (intent, idempotency_key, created_at) VALUES (?, ?, ?) ON CONFLICT (intent) DO NOTHING');
    this.#select = this.#db.prepare('SELECT idempotency_key FROM intent_keys WHERE intent = ?');
  }

  async keyFor(intent: string): Promise<string> {
    checkIntent(intent);
    const existing = this.#select.get(intent);
    if (existing) return existing.idempotency_key;
    this.#insert.run(intent, newIdempotencyKey(), new Date().toISOString());
    // Another process may have won the insert: the stored row is the truth.
    return this.#select.get(intent)!.idempotency_key;
  }

  async get(intent: string): Promise<string | undefined> {
    return this.#select.get(intent)?.idempotency_key;
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

/** For tests and short-lived scripts only: a restarted process forgets its keys. */
export class MemoryKeyStore implements KeyStore {
  readonly #keys = new Map<string, string>();

  async keyFor(intent: string): Promise<string> {
    checkIntent(intent);
    let key = this.#keys.get(intent);
    if (!key) {
      key = newIdempotencyKey();
      this.#keys.set(intent, key);
    }
    return key;
  }

  async get(intent: string): Promise<string | undefined> {
    return this.#keys.get(intent);
  }

  close(): void {}
}

function checkIntent(intent: string): void {
  if (typeof intent !== 'string' || intent.length === 0) throw new TypeError('an intent is a non-empty string');
}
