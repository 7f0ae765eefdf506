import { EVENT_ROW_COLUMNS, ROW, withoutAccountId } from '../core/event-shape.js';
import { PAYLOAD_AS_HEX } from '../core/event-hash.js';

/**
 * The events columns every database reader selects, in EVENT_ROW_COLUMNS order (the header
 * fields in contract order, then hash and payload: ChainVerifier.addRow's row, rowEvent its
 * slow path). Rows are read as arrays (no per-row column-name objects).
 */
export const EVENT_COLUMNS = EVENT_ROW_COLUMNS.join(', ');

/** The same with the payload as hex text (PAYLOAD_AS_HEX), for checkEventRowHexPayload (slice-check.ts). */
export const EVENT_COLUMNS_HEX_PAYLOAD = EVENT_ROW_COLUMNS.map((c) => (c === 'payload' ? PAYLOAD_AS_HEX : c)).join(', ');

/**
 * The slices' columns (slice-check.ts): EVENT_ROW_COLUMNS less account_id, the payload as hex
 * text, for checkEventRowOfAccountHexPayload, with the account's id bound as @account (the query's
 * WHERE uses it too: SLICE_ACCOUNT). The rows are those the reference path reads
 * (`account_id = ?`, under the column's own collation), and a row whose account_id is not
 * exactly the bound id — not TEXT (a column of numeric affinity in a rewritten schema lets
 * integer 5 equal '5'), or not equal byte for byte (a NOCASE collation lets 'ACME' equal
 * 'acme') — has its payload turned into '-', which is no hex: the slice refuses it and the
 * reference path, which reads account_id, names it. So the check checkEventRowHexPayload makes
 * on the column (`r[account_id] === accountId`) is made here, on every row, in SQL.
 */
export const EVENT_COLUMNS_OF_ACCOUNT = EVENT_ROW_COLUMNS.filter((c) => c !== 'account_id')
  .map((c) => (c === 'payload' ? `CASE WHEN typeof(account_id) <> 'text' OR account_id <> @account COLLATE BINARY THEN '-' ELSE ${PAYLOAD_AS_HEX} END` : c)).join(', ');

/** The slices' condition on account_id, the reference path's, with the id bound as @account (EVENT_COLUMNS_OF_ACCOUNT). */
export const SLICE_ACCOUNT = 'account_id = @account';

/** Positions in a slice's row (EVENT_COLUMNS_OF_ACCOUNT) of the columns slice-check.ts reads. */
export const SLICE_ROW = { seq: withoutAccountId(ROW.seq), ts: withoutAccountId(ROW.ts), prev_hash: withoutAccountId(ROW.prev_hash) } as const;
