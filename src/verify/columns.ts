import { EVENT_ROW_COLUMNS } from '../core/event-shape.js';
import { PAYLOAD_AS_HEX } from '../core/event-hash.js';

/**
 * The events columns every database reader selects, in EVENT_ROW_COLUMNS order (the header
 * fields in contract order, then hash and payload: ChainVerifier.addRow's row, rowEvent its
 * slow path). Rows are read as arrays (no per-row column-name objects).
 */
export const EVENT_COLUMNS = EVENT_ROW_COLUMNS.join(', ');

/** The same with the payload as hex text (PAYLOAD_AS_HEX), for checkEventRowHexPayload (slice-check.ts). */
export const EVENT_COLUMNS_HEX_PAYLOAD = EVENT_ROW_COLUMNS.map((c) => (c === 'payload' ? PAYLOAD_AS_HEX : c)).join(', ');
