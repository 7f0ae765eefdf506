/**
 * The query of `GET /v1/review/duplicates` (docs/http-api.md), and its cursor, which carries the
 * account, the time window and window_seconds with the position, like the search cursor.
 */
import { accountIdParam, integerParam, onlyParams, paramError, singleParam, timeParam, type RawParams } from './query-params.js';
import { decodeListCursor, encodeListCursor, questionOf, type CursorRules } from '../core/list-cursor.js';
import { isAccountId } from '../principals/accounts.js';

export interface DuplicatesQuery {
  accountId: string | undefined;
  since?: string;
  until?: string;
  windowSeconds: number;
  limit: number;
  /** The anchor (created_at, id) of the last group of the previous page. */
  after: { created_at: string; id: string } | null;
}

/** The report's filters as its cursor carries them (core/list-cursor.ts). */
type DuplicatesFilters = { since?: string; until?: string; window_seconds?: number };

const FILTER_NAMES = ['since', 'until', 'window_seconds'];
/** Every query parameter of the report: `GET /v1/review/duplicates` declares these as the ones it takes. */
export const DUPLICATES_PARAM_NAMES: readonly string[] = ['account_id', ...FILTER_NAMES, 'limit', 'cursor'];
export const DEFAULT_WINDOW_SECONDS = 600;
/** 30 days: longer than any retry loop, short enough that a daily job is not a "duplicate" of yesterday's. */
export const MAX_WINDOW_SECONDS = 30 * 24 * 3600;
export const MAX_DUPLICATES_PAGE = 200;
const WINDOW = { fallback: DEFAULT_WINDOW_SECONDS, min: 1, max: MAX_WINDOW_SECONDS };

/** Groups come newest first: the one order of the report. */
const ORDER = 'desc';

/** What a duplicates cursor may hold: its filters are read as the parameters are, and none other. */
const CURSOR_RULES: CursorRules<DuplicatesFilters> = {
  idPrefix: 'op',
  isAccountId,
  filters: (raw) => {
    const params = Object.fromEntries(Object.entries(raw).map(([name, value]) => [name, String(value)]));
    onlyParams(params, FILTER_NAMES);
    return filtersOf(params);
  },
};

export function parseDuplicatesParams(raw: RawParams): DuplicatesQuery {
  onlyParams(raw, DUPLICATES_PARAM_NAMES, 'this report');
  const accountId = accountIdParam(raw);
  const filters = filtersOf(raw);
  const limit = integerParam(raw, 'limit', { fallback: 50, min: 1, max: MAX_DUPLICATES_PAGE });
  const cursorText = singleParam(raw, 'cursor');
  const cursor = cursorText === undefined ? null : decodeListCursor(cursorText, CURSOR_RULES);
  // The window's default is part of the question a cursor carries: a later default cannot change it.
  const asked = questionOf(cursor, { account: accountId, filters: cursor ? filters : { window_seconds: DEFAULT_WINDOW_SECONDS, ...filters }, order: ORDER }, ORDER);
  const { since, until, window_seconds: windowSeconds = DEFAULT_WINDOW_SECONDS } = asked.filters;
  if (since !== undefined && until !== undefined && since >= until) throw paramError('until', 'must be later than since');
  return {
    accountId: asked.account ?? undefined, since, until, windowSeconds, limit,
    after: cursor ? { created_at: cursor.at, id: cursor.id } : null,
  };
}

function filtersOf(raw: RawParams): DuplicatesFilters {
  const filters: DuplicatesFilters = {};
  const since = timeParam(raw, 'since');
  if (since !== undefined) filters.since = since;
  const until = timeParam(raw, 'until');
  if (until !== undefined) filters.until = until;
  if (raw.window_seconds !== undefined) filters.window_seconds = integerParam(raw, 'window_seconds', WINDOW);
  return filters;
}

export function encodeDuplicatesCursor(query: DuplicatesQuery, accountId: string, anchor: { created_at: string; id: string }): string {
  const filters: DuplicatesFilters = { window_seconds: query.windowSeconds };
  if (query.since !== undefined) filters.since = query.since;
  if (query.until !== undefined) filters.until = query.until;
  return encodeListCursor({ account: accountId, filters, order: ORDER, at: anchor.created_at, id: anchor.id });
}
