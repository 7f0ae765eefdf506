/**
 * Reads a Gatehouse PostgreSQL database for verify with `pg` directly (no Kysely, no
 * migrations, no context), in a read-only transaction so the whole run sees one snapshot.
 * Events come in keyset pages (seq > last, LIMIT n): memory stays flat on any size.
 */
import pg from 'pg';
import type { VerifierCheckpoint } from '../core/checkpoint-trust.js';
import { int8AsNumber } from '../store/pg-int8.js';
import { VerifyInputError, ioErrorCode } from './errors.js';
import { EVENT_COLUMNS } from './columns.js';
import { withCosignatureLines } from './cosignature-lines.js';
import { type LedgerMeta, ledgerMeta } from './ledger-meta.js';
import type { VerificationRun } from './run.js';

const PAGE = 5000;
/**
 * One query (a page of 5,000 events at most) that has had no answer for this long means the
 * database or the network stopped answering: exit 2 then, not a hang. The server cannot say so
 * itself (statement_timeout) when the network is what went silent.
 */
const QUERY_TIMEOUT_MS = 60_000;

export class PostgresLedgerReader {
  readonly ledgerId: string | null;
  /** The master key's check value the ledger recorded (meta `master_key_check`); null in a database without one. */
  readonly masterKeyCheck: string | null;
  readonly #client: pg.Client;

  private constructor(client: pg.Client, meta: LedgerMeta) {
    this.#client = client;
    this.ledgerId = meta.ledgerId;
    this.masterKeyCheck = meta.masterKeyCheck;
  }

  static async open(url: string, options: { queryTimeoutMs?: number } = {}): Promise<PostgresLedgerReader> {
    const client = new pg.Client({
      connectionString: url, types: int8AsNumber, connectionTimeoutMillis: 10_000, query_timeout: options.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
    });
    client.on('error', () => undefined); // a dropped connection surfaces on the next query
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw new VerifyInputError(`cannot connect to the PostgreSQL database: ${ioErrorCode(error) ?? (error as Error).message}`);
    }
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const tables = await client.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('events', 'checkpoints', 'meta')",
      );
      if (tables.rows.length < 3) throw new VerifyInputError('the PostgreSQL database is not a Gatehouse ledger (no events, checkpoints or meta table)');
      const meta = await client.query<{ key: string; value: unknown }>("SELECT key, value FROM meta WHERE key IN ('ledger_id', 'master_key_check')");
      return new PostgresLedgerReader(client, ledgerMeta(meta.rows));
    } catch (error) {
      await client.end().catch(() => undefined);
      if (error instanceof VerifyInputError) throw error;
      throw new VerifyInputError(`cannot read the PostgreSQL database: ${ioErrorCode(error) ?? (error as Error).message}`);
    }
  }

  async accounts(): Promise<string[]> {
    const result = await this.#client.query({
      text: 'SELECT DISTINCT account_id FROM events UNION SELECT account_id FROM checkpoints ' +
        'UNION SELECT account_id FROM chains UNION SELECT id FROM accounts ORDER BY 1',
      rowMode: 'array',
    });
    return (result.rows as Array<[string]>).map((r) => r[0]);
  }

  async approximateEventCount(accountId: string | null): Promise<number> {
    const result = accountId === null
      ? await this.#client.query({ text: 'SELECT SUM(size)::bigint FROM chains', rowMode: 'array' })
      : await this.#client.query({ text: 'SELECT SUM(size)::bigint FROM chains WHERE account_id = $1', values: [accountId], rowMode: 'array' });
    const total = (result.rows[0] as [number | null] | undefined)?.[0];
    return typeof total === 'number' ? total : 0;
  }

  async verifyAccount(run: VerificationRun, accountId: string): Promise<void> {
    const key = await this.#client.query({ text: 'SELECT wrapped_data_key FROM accounts WHERE id = $1', values: [accountId], rowMode: 'array' });
    const checkpoints = await this.#client.query<VerifierCheckpoint>(
      'SELECT tree_size, root_hash, note FROM checkpoints WHERE account_id = $1 ORDER BY tree_size', [accountId],
    );
    const keyRow = key.rows[0] as [Uint8Array | null] | undefined;
    const hasCosignatures = (await this.#client.query(
      "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'checkpoint_cosignatures'",
    )).rows.length > 0;
    const lines = hasCosignatures
      ? (await this.#client.query<{ tree_size: number; line: string }>(
        'SELECT tree_size, line FROM checkpoint_cosignatures WHERE account_id = $1 ORDER BY tree_size, witness', [accountId])).rows
      : [];
    run.beginAccount({ accountId, checkpoints: withCosignatureLines(checkpoints.rows, lines), ...(keyRow !== undefined ? { wrappedDataKey: keyRow[0] } : {}) });
    for (let after = 0; ;) {
      const page = await this.#client.query({
        text: `SELECT ${EVENT_COLUMNS} FROM events WHERE account_id = $1 AND seq > $2 ORDER BY seq LIMIT ${PAGE}`,
        values: [accountId, after],
        rowMode: 'array',
      });
      for (const row of page.rows as unknown[][]) run.addRow(row);
      if (page.rows.length < PAGE) break;
      after = (page.rows[page.rows.length - 1] as unknown[])[0] as number;
    }
    run.endAccount();
  }

  async close(): Promise<void> {
    await this.#client.end().catch(() => undefined);
  }
}
