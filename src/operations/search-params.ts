/**
 * The query of `GET /v1/operations` (docs/http-api.md) and of the review console's search: raw
 * query parameters in, a checked `SearchQuery` out, or `invalid_request` naming the parameter.
 * Unknown parameters are refused too: a misspelt filter silently ignored would list every
 * operation of the account to someone who believes they are looking at one agent run.
 */
import { RouteError, validateMethod, validateRoute } from '../core/route.js';
import { compilePattern, PatternError, type RoutePattern } from '../policies/route-match.js';
import { OPERATION_STATES, type OperationState } from './states.js';
import { decodeSearchCursor, type SearchCursor, type SearchFilters, type SearchOrder } from './search-cursor.js';

export type { SearchFilters, SearchOrder } from './search-cursor.js';
import { accountIdParam, integerParam, onlyParams, paramError, singleParam, timeParam, type RawParams } from './query-params.js';

export interface SearchQuery {
  /** As asked for; the caller's right to read it is checked by the domain. Absent: the caller's own. */
  accountId: string | undefined;
  filters: SearchFilters;
  /** Set when `filters.route` has a `*` segment. */
  routePattern: RoutePattern | null;
  order: SearchOrder;
  limit: number;
  /** Where the previous page ended. */
  after: { created_at: string; id: string } | null;
}

export const FILTER_NAMES = ['agent_run_id', 'business_key', 'fingerprint', 'idempotency_key', 'method', 'route', 'state', 'since', 'until'] as const;
const PARAM_NAMES = [...FILTER_NAMES, 'account_id', 'order', 'limit', 'cursor'];
export const MAX_SEARCH_PAGE = 1000;
const DEFAULT_PAGE = 100;

const FINGERPRINT = /^[0-9a-f]{64}$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7E]{1,255}$/;

export function parseSearchParams(raw: RawParams): SearchQuery {
  onlyParams(raw, PARAM_NAMES, 'this list');
  const filters = parseFilters(raw);
  const accountParam = accountIdParam(raw);
  const orderParam = singleParam(raw, 'order');
  if (orderParam !== undefined && orderParam !== 'asc' && orderParam !== 'desc') throw paramError('order', 'must be asc or desc');
  const limit = integerParam(raw, 'limit', { fallback: DEFAULT_PAGE, min: 1, max: MAX_SEARCH_PAGE });
  const cursorParam = singleParam(raw, 'cursor');
  const cursor = cursorParam === undefined ? null : recheck(decodeSearchCursor(cursorParam));
  const merged = cursor ? mergeWithCursor(cursor, filters, accountParam, orderParam) : { filters, accountId: accountParam, order: orderParam ?? 'desc' };
  if (merged.filters.since !== undefined && merged.filters.until !== undefined && merged.filters.since >= merged.filters.until) {
    throw paramError('until', 'must be later than since');
  }
  return {
    accountId: merged.accountId,
    filters: merged.filters,
    routePattern: merged.filters.route !== undefined && isPattern(merged.filters.route) ? compilePattern('GET', merged.filters.route) : null,
    order: merged.order as SearchOrder,
    limit,
    after: cursor ? { created_at: cursor.at, id: cursor.id } : null,
  };
}

function parseFilters(raw: RawParams): SearchFilters {
  const filters: SearchFilters = {};
  const text = (name: 'agent_run_id' | 'business_key') => {
    const value = singleParam(raw, name);
    if (value !== undefined) filters[name] = value;
  };
  text('agent_run_id');
  text('business_key');
  const fingerprint = singleParam(raw, 'fingerprint');
  if (fingerprint !== undefined) {
    if (!FINGERPRINT.test(fingerprint)) throw paramError('fingerprint', 'must be 64 lowercase hex digits (a SHA-256)');
    filters.fingerprint = fingerprint;
  }
  const key = singleParam(raw, 'idempotency_key');
  if (key !== undefined) {
    if (!IDEMPOTENCY_KEY.test(key)) throw paramError('idempotency_key', 'must be 1-255 visible ASCII characters');
    filters.idempotency_key = key;
  }
  const method = singleParam(raw, 'method');
  if (method !== undefined) filters.method = checked('method', () => validateMethod(method));
  const route = singleParam(raw, 'route');
  if (route !== undefined) filters.route = checkRoute(route);
  const state = singleParam(raw, 'state');
  if (state !== undefined) {
    if (!(OPERATION_STATES as readonly string[]).includes(state)) throw paramError('state', `must be one of ${OPERATION_STATES.join(', ')}`);
    filters.state = state as OperationState;
  }
  const since = timeParam(raw, 'since');
  if (since !== undefined) filters.since = since;
  const until = timeParam(raw, 'until');
  if (until !== undefined) filters.until = until;
  return filters;
}

/** An exact route, or a pattern where a `*` segment matches exactly one segment (as in policies). */
function checkRoute(route: string): string {
  if (!isPattern(route)) return checked('route', () => validateRoute(route));
  try {
    compilePattern('GET', route);
  } catch (error) {
    if (error instanceof PatternError) throw paramError('route', error.message);
    throw error;
  }
  return route;
}

function isPattern(route: string): boolean {
  return route.includes('*');
}

function checked(name: string, validate: () => string): string {
  try {
    return validate();
  } catch (error) {
    if (error instanceof RouteError) throw paramError(name, error.message);
    throw error;
  }
}

/** What a cursor carries is checked again like parameters: a crafted one is refused as a bad cursor, never a 500. */
function recheck(cursor: SearchCursor): SearchCursor {
  try {
    return { ...cursor, filters: parseFilters(cursor.filters as RawParams) };
  } catch {
    throw paramError('cursor', 'is not a cursor this server gave out');
  }
}

/** A cursor carries filters, account and order: the query may repeat them, but not change them. */
function mergeWithCursor(cursor: SearchCursor, given: SearchFilters, accountId: string | undefined, order: string | undefined) {
  const names = new Set([...Object.keys(given), ...Object.keys(cursor.filters)]) as Set<keyof SearchFilters>;
  for (const name of names) {
    if (given[name] !== undefined && given[name] !== cursor.filters[name]) {
      throw paramError('cursor', `was made for other filters (${name} differs): start again without a cursor`);
    }
  }
  if (accountId !== undefined && accountId !== cursor.account) throw paramError('cursor', 'was made for another account_id');
  if (order !== undefined && order !== cursor.order) throw paramError('cursor', 'was made for the other order');
  return { filters: cursor.filters, accountId: cursor.account ?? undefined, order: cursor.order };
}
