/**
 * Reads a Gatehouse SQLite file for verify: opened read-only with better-sqlite3 directly (no
 * Kysely, no migrations, no context: nothing here may write or need the service), events
 * streamed one row at a time with `iterate()` in raw mode, so memory stays flat on any size.
 * A large account is checked in slices on worker threads (sqlite-slices.ts).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { unwrapForFastPath } from '../core/account-data-key.js';
import type { VerifierCheckpoint } from '../core/checkpoint-trust.js';
import { VerifyInputError, ioErrorCode } from './errors.js';
import { EVENT_COLUMNS } from './columns.js';
import { withCosignatureLines } from './cosignature-lines.js';
import { type LedgerMeta, ledgerMeta } from './ledger-meta.js';
import { type LedgerFile, ledgerFileToOpen, openLedgerDb } from './sqlite-file.js';
import type { AccountStart, VerificationRun } from './run.js';
import { type ParallelSettings, SliceWorkers, verifySlices } from './sqlite-slices.js';

/**
 * The distinct account_id values of events: the values `SELECT account_id FROM events GROUP BY
 * account_id` gives, found by a loose scan of the (account_id, seq) primary key — one seek per
 * account, each for the next value after the last one in the index's own order (`>` on the
 * column against a value of the same column compares as the index sorts: type, then BINARY) —
 * instead of reading all of the index's entries. The GROUP BY took 70–150 ms of CPU (0.1–0.5 s
 * of wall time, before any worker starts) on a 1M-event file; this takes ~1 ms. NULL sorts
 * first and ends the recursion, so it is looked for on its own, as GROUP BY would give it.
 */
const EVENT_ACCOUNTS = `WITH RECURSIVE present(id) AS (
  SELECT (SELECT account_id FROM events WHERE account_id IS NOT NULL ORDER BY account_id LIMIT 1)
  UNION ALL
  SELECT (SELECT account_id FROM events WHERE account_id > present.id ORDER BY account_id LIMIT 1) FROM present WHERE present.id IS NOT NULL
) SELECT id FROM present WHERE id IS NOT NULL
UNION SELECT NULL WHERE EXISTS (SELECT 1 FROM events WHERE account_id IS NULL)`;

/** The largest chain head's size, only to decide whether to start slice workers early: null when the file says nothing usable. */
function longestChain(db: BetterSqlite3.Database): unknown {
  try {
    return db.prepare('SELECT MAX(size) FROM chains').pluck().get();
  } catch {
    return null; // no chains table, no size column: nothing is started early
  }
}

export class SqliteLedgerReader {
  readonly ledgerId: string | null;
  /** The master key's check value the ledger recorded (meta `master_key_check`); null in a file without one. */
  readonly masterKeyCheck: string | null;
  readonly #db: BetterSqlite3.Database;
  /** What this thread opened, and every slice worker opens: the file, or its copy (sqlite-file.ts). */
  readonly #file: LedgerFile;
  readonly #settings: ParallelSettings;
  /** Started at open for the first account checked in slices (SliceWorkers); null once taken, or when none is long enough. */
  #early: SliceWorkers | null;

  private constructor(db: BetterSqlite3.Database, file: LedgerFile, meta: LedgerMeta, settings: ParallelSettings) {
    this.#db = db;
    this.#file = file;
    this.ledgerId = meta.ledgerId;
    this.masterKeyCheck = meta.masterKeyCheck;
    this.#settings = settings;
    // The chain heads say whether an account is long enough: a wrong head only starts them for nothing, or late.
    const longest = longestChain(db);
    this.#early = settings.threads >= 2 && typeof longest === 'number' && longest >= settings.minEvents
      ? SliceWorkers.start(file.path, settings.threads - 1)
      : null;
  }

  /** `note` hears of a copy read in the file's stead (a WAL-mode file at rest on read-only storage). */
  static open(file: string, settings: ParallelSettings, note: (message: string) => void = () => {}): SqliteLedgerReader {
    const opened = ledgerFileToOpen(file);
    if (opened.copy !== null) {
      note(`${file} is a WAL-mode SQLite file with no -wal beside it, on storage where SQLite cannot make one: reading a copy in ${opened.copy.dir}, removed when verify ends`);
    }
    let db: BetterSqlite3.Database;
    try {
      db = openLedgerDb(opened.path);
    } catch (error) {
      opened.release();
      throw new VerifyInputError(`cannot open ${file}: ${ioErrorCode(error) ?? (error as Error).message}`);
    }
    try {
      const tables = new Set(
        (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((t) => t.name),
      );
      for (const table of ['events', 'checkpoints', 'meta']) {
        if (!tables.has(table)) throw new VerifyInputError(`${file} is not a Gatehouse database (no ${table} table)`);
      }
      const rows = db.prepare("SELECT key, value FROM meta WHERE key IN ('ledger_id', 'master_key_check')").all() as Array<{ key: string; value: unknown }>;
      return new SqliteLedgerReader(db, opened, ledgerMeta(rows), settings);
    } catch (error) {
      db.close();
      opened.release();
      if (error instanceof VerifyInputError) throw error;
      throw new VerifyInputError(`${file} is not a readable SQLite database: ${ioErrorCode(error) ?? (error as Error).message}`);
    }
  }

  /**
   * Every account the file knows of: one with events, a chain head, a checkpoint or a data
   * key. (Deleting an account's chain row must not hide its events from verify.)
   */
  accounts(): string[] {
    const rows = this.#db.prepare(
      `${EVENT_ACCOUNTS} UNION SELECT account_id FROM checkpoints ` +
        'UNION SELECT account_id FROM chains UNION SELECT id FROM accounts ORDER BY 1',
    ).raw(true).all() as Array<[string]>;
    return rows.map((r) => r[0]);
  }

  /** Events in this file (from the chain heads): only for the progress display. */
  approximateEventCount(accountId: string | null): number {
    const sql = accountId === null ? 'SELECT SUM(size) FROM chains' : 'SELECT SUM(size) FROM chains WHERE account_id = ?';
    const stmt = this.#db.prepare(sql).pluck();
    const total = (accountId === null ? stmt.get() : stmt.get(accountId)) as number | null;
    return typeof total === 'number' ? total : 0;
  }

  async verifyAccount(run: VerificationRun, accountId: string): Promise<void> {
    const key = this.#db.prepare('SELECT wrapped_data_key FROM accounts WHERE id = ?').raw(true).get(accountId) as [Uint8Array | null] | undefined;
    const stored = this.#db.prepare(
      'SELECT tree_size, root_hash, note FROM checkpoints WHERE account_id = ? ORDER BY tree_size',
    ).all(accountId) as VerifierCheckpoint[];
    const hasCosignatures = this.#db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoint_cosignatures'").get() !== undefined;
    const lines = hasCosignatures
      ? this.#db.prepare('SELECT tree_size, line FROM checkpoint_cosignatures WHERE account_id = ? ORDER BY tree_size, witness').all(accountId) as Array<{ tree_size: number; line: string }>
      : [];
    const start: AccountStart = { accountId, checkpoints: withCosignatureLines(stored, lines), ...(key !== undefined ? { wrappedDataKey: key[0] } : {}) };
    let after: number | null = null;
    const maxSeq = this.#db.prepare('SELECT MAX(seq) FROM events WHERE account_id = ?').pluck().get(accountId);
    const sliced = this.#settings.threads >= 2 && typeof maxSeq === 'number' && Number.isSafeInteger(maxSeq) && maxSeq >= this.#settings.minEvents;
    const workers = sliced ? this.#early ?? SliceWorkers.start(this.#file.path, this.#settings.threads - 1) : null;
    if (sliced) this.#early = null;
    if (workers === null) {
      run.beginAccount(start);
    } else {
      try {
        // verifySlices begins the account once the workers have their slices.
        const dataKey = unwrapForFastPath(run.masterKey, accountId, key?.[0]);
        const result = await verifySlices({ workers, db: this.#db, run, start, maxSeq: maxSeq as number, dataKey, settings: this.#settings });
        if (result.done) {
          run.endAccount();
          return;
        }
        after = result.after;
      } finally {
        await workers.terminate();
      }
    }
    // The reference path: every row in seq order (or those after the last one the slices gave).
    // After the slices: from `seq >= after`, less the one row with seq `after` they took, so
    // that a second row with that seq (a file whose events table lost its primary key) is seen
    // as the single-thread path sees it; `seq > after` would skip it.
    const events = after === null
      ? this.#db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE account_id = ? ORDER BY seq`).raw(true).iterate(accountId)
      : this.#db.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE account_id = ? AND seq >= ? ORDER BY seq`).raw(true).iterate(accountId, after);
    let taken = after === null;
    for (const row of events as IterableIterator<unknown[]>) {
      if (!taken) {
        taken = true;
        if (row[0] === after) continue;
      }
      run.addRow(row);
    }
    run.endAccount();
  }

  async close(): Promise<void> {
    await this.#early?.terminate();
    this.#early = null;
    this.#db.close();
    this.#file.release();
  }
}
