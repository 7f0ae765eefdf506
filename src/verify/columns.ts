import { EVENT_ROW_COLUMNS } from '../core/event-shape.js';

/**
 * The events columns every database reader selects, in EVENT_ROW_COLUMNS order (the header
 * fields in contract order, then hash and payload: ChainVerifier.addRow's row, rowEvent its
 * slow path). Rows are read as arrays (no per-row column-name objects).
 */
export const EVENT_COLUMNS = EVENT_ROW_COLUMNS.join(', ');
