/**
 * The query of `GET /v1/review/duplicates` (docs/http-api.md), and its cursor, which carries the
 * account, the time window and window_seconds with the position, like the search cursor.
 */
import { accountIdParam, integerParam, onlyParams, paramError, singleParam, timeParam, type RawParams } from './query-params.js';
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

const NAMES = ['account_id', 'since', 'until', 'window_seconds', 'limit', 'cursor'];
export const DEFAULT_WINDOW_SECONDS = 600;
/** 30 days: longer than any retry loop, short enough that a daily job is not a "duplicate" of yesterday's. */
export const MAX_WINDOW_SECONDS = 30 * 24 * 3600;
export const MAX_DUPLICATES_PAGE = 200;
const WINDOW = { fallback: DEFAULT_WINDOW_SECONDS, min: 1, max: MAX_WINDOW_SECONDS };

export function parseDuplicatesParams(raw: RawParams): DuplicatesQuery {
  onlyParams(raw, NAMES, 'this report');
  const given = {
    accountId: accountIdParam(raw),
    since: timeParam(raw, 'since'),
    until: timeParam(raw, 'until'),
    windowSeconds: raw.window_seconds === undefined ? undefined : integerParam(raw, 'window_seconds', WINDOW),
  };
  const limit = integerParam(raw, 'limit', { fallback: 50, min: 1, max: MAX_DUPLICATES_PAGE });
  const cursorText = singleParam(raw, 'cursor');
  const cursor = cursorText === undefined ? null : decodeDuplicatesCursor(cursorText);
  if (cursor) {
    for (const name of ['accountId', 'since', 'until', 'windowSeconds'] as const) {
      if (given[name] !== undefined && given[name] !== cursor[name]) throw paramError('cursor', `was made for another ${name === 'accountId' ? 'account_id' : name === 'windowSeconds' ? 'window_seconds' : name}: start again without a cursor`);
    }
  }
  const chosen = cursor ?? { ...given, windowSeconds: given.windowSeconds ?? DEFAULT_WINDOW_SECONDS };
  if (chosen.since !== undefined && chosen.until !== undefined && chosen.since >= chosen.until) throw paramError('until', 'must be later than since');
  return {
    accountId: chosen.accountId, since: chosen.since, until: chosen.until, windowSeconds: chosen.windowSeconds!, limit,
    after: cursor ? { created_at: cursor.at, id: cursor.id } : null,
  };
}

interface DuplicatesCursor {
  accountId: string | undefined;
  since: string | undefined;
  until: string | undefined;
  windowSeconds: number;
  at: string;
  id: string;
}

export function encodeDuplicatesCursor(query: DuplicatesQuery, accountId: string, anchor: { created_at: string; id: string }): string {
  const value = { v: 1, account_id: accountId, since: query.since ?? null, until: query.until ?? null, window_seconds: query.windowSeconds, at: anchor.created_at, id: anchor.id };
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Not signed: every value is checked again as if it were a parameter. */
function decodeDuplicatesCursor(text: string): DuplicatesCursor {
  const refuse = () => paramError('cursor', 'is not a cursor this server gave out');
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (v.v !== 1 || !isAccountId(v.account_id) || typeof v.at !== 'string' || typeof v.id !== 'string') throw refuse();
    const params: RawParams = { window_seconds: String(v.window_seconds) };
    if (v.since !== null) params.since = v.since as string;
    if (v.until !== null) params.until = v.until as string;
    const checked = {
      since: timeParam(params, 'since'), until: timeParam(params, 'until'),
      windowSeconds: integerParam(params, 'window_seconds', WINDOW), at: timeParam({ at: v.at }, 'at')!,
    };
    if (checked.at !== v.at || !/^op_[A-Za-z0-9_-]{1,64}$/.test(v.id)) throw refuse();
    return { accountId: v.account_id, ...checked, id: v.id };
  } catch {
    throw refuse();
  }
}
