/**
 * The witness's own state: for each log origin, the latest checkpoint it cosigned. A SQLite file
 * in the witness's directory, written with better-sqlite3 directly (no Kysely, no migrations:
 * one table).
 *
 * Check and persist are one IMMEDIATE transaction: the write lock is taken before the stored
 * size is read, so of two racing requests (in this process or another on the same file) the
 * second sees what the first wrote. A checkpoint can never replace a larger one it was not
 * checked against (tlog-witness: "rolling back K leaves").
 */
import BetterSqlite3 from 'better-sqlite3';

export interface StoredCheckpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** The checkpoint note as cosigned, with this witness's cosignature line. */
  note: string;
}

/** What a request decides once it sees the stored state: write this, or refuse with that. */
export type Decision<T> = { persist: StoredCheckpoint; result: T } | { persist: null; result: T };

export class WitnessStore {
  readonly #db: BetterSqlite3.Database;

  constructor(file: string) {
    this.#db = new BetterSqlite3(file);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(`CREATE TABLE IF NOT EXISTS logs (
      origin TEXT PRIMARY KEY, size INTEGER NOT NULL, root BLOB NOT NULL, note TEXT NOT NULL, updated_at TEXT NOT NULL)`);
  }

  latest(origin: string): StoredCheckpoint | null {
    const row = this.#db.prepare('SELECT origin, size, root, note FROM logs WHERE origin = ?').get(origin) as StoredCheckpoint | undefined;
    return row === undefined ? null : { ...row, root: new Uint8Array(row.root) };
  }

  byOriginHash(originHashHex: string, hash: (origin: string) => string): StoredCheckpoint | null {
    // Few logs per witness: a scan is simpler than a second column.
    const rows = this.#db.prepare('SELECT origin FROM logs').pluck().all() as string[];
    const origin = rows.find((o) => hash(o) === originHashHex);
    return origin === undefined ? null : this.latest(origin);
  }

  /** Reads the origin's state, lets `decide` look at it, and writes what it decided, atomically. */
  checkAndPersist<T>(origin: string, decide: (current: StoredCheckpoint | null) => Decision<T>): T {
    const run = this.#db.transaction(() => {
      const decision = decide(this.latest(origin));
      if (decision.persist !== null) {
        const p = decision.persist;
        this.#db.prepare(`INSERT INTO logs (origin, size, root, note, updated_at) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, note = excluded.note, updated_at = excluded.updated_at`)
          .run(p.origin, p.size, Buffer.from(p.root), p.note, new Date().toISOString());
      }
      return decision.result;
    });
    return run.immediate();
  }

  close(): void {
    this.#db.close();
  }
}
