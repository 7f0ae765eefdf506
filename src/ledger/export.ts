import type { Db } from '../store/store.js';
import { type EventHeader, toEventHeader } from '../core/event-shape.js';
import { withCosignatures } from './cosignatures.js';

const PAGE = 1000;

export interface ExportHeader {
  format: 'gatehouse-export';
  version: 1;
  ledger_id: string;
  account_id: string | null;
  exported_at: string;
  keys: unknown[];
  /**
   * Beyond the contract's header: each account's data key wrapped by the master key
   * (null once shredded), so `gatehouse verify --master-key` can check payloads offline.
   */
  data_keys: Record<string, string | null>;
}

export interface ExportedEvent {
  kind: 'event';
  header: EventHeader;
  hash: string;
  payload: string | null;
}

type EventRow = EventHeader & { hash: string; payload: Buffer | null };

/** The header in the contract's field order, so exports read the same whatever order the database returns columns in. */
export function toExportedEvent(row: EventRow): ExportedEvent {
  return { kind: 'event', header: toEventHeader(row), hash: row.hash, payload: row.payload ? Buffer.from(row.payload).toString('base64') : null };
}

/**
 * NDJSON lines of the export format, page by page (constant memory): the header,
 * every event grouped by account in seq order, then every checkpoint.
 */
export async function* exportLines(
  db: Db, header: Omit<ExportHeader, 'format' | 'version' | 'data_keys'>,
): AsyncGenerator<string> {
  const accounts = header.account_id === null
    ? (await db.selectFrom('chains').select('account_id').orderBy('account_id').execute()).map((r) => r.account_id)
    : [header.account_id];
  const dataKeys: Record<string, string | null> = {};
  for (const account of accounts) {
    const row = await db.selectFrom('accounts').select('wrapped_data_key').where('id', '=', account).executeTakeFirst();
    // null says "shredded" to verify; an account with no key row (never sealed a payload, or
    // not in this ledger at all) is left out rather than reported as shredded.
    if (row) dataKeys[account] = row.wrapped_data_key ? Buffer.from(row.wrapped_data_key).toString('base64') : null;
  }
  const full: ExportHeader = { format: 'gatehouse-export', version: 1, ...header, data_keys: dataKeys };
  yield JSON.stringify(full) + '\n';
  for (const account of accounts) {
    for (let after = 0; ;) {
      const rows = await db.selectFrom('events').selectAll()
        .where('account_id', '=', account).where('seq', '>', after).orderBy('seq').limit(PAGE).execute();
      for (const row of rows) yield JSON.stringify(toExportedEvent(row)) + '\n';
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.seq;
    }
  }
  for (const account of accounts) {
    const checkpoints = await db.selectFrom('checkpoints').selectAll()
      .where('account_id', '=', account).orderBy('tree_size').execute();
    // With their witness cosignatures, so verify --witness-key can check an export too.
    for (const checkpoint of await withCosignatures(db, checkpoints)) yield JSON.stringify({ kind: 'checkpoint', ...checkpoint }) + '\n';
  }
}

/** Whether the ledger knows the account: it has a chain (events) or a data key row. */
export async function accountInLedger(db: Db, accountId: string): Promise<boolean> {
  const chain = await db.selectFrom('chains').select('account_id').where('account_id', '=', accountId).executeTakeFirst();
  if (chain) return true;
  return (await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst()) !== undefined;
}

/** One page of an account's events after `afterSeq`, as the audit API lists them. */
export async function eventsPage(db: Db, accountId: string, afterSeq: number, limit: number): Promise<{ items: Array<Omit<ExportedEvent, 'kind'>>; next_cursor: string | null }> {
  const rows = await db.selectFrom('events').selectAll()
    .where('account_id', '=', accountId).where('seq', '>', afterSeq).orderBy('seq').limit(limit + 1).execute();
  const page = rows.slice(0, limit);
  return {
    items: page.map((row) => {
      const { header, hash, payload } = toExportedEvent(row);
      return { header, hash, payload };
    }),
    next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null,
  };
}
