/**
 * The query of `GET /v1/operations` (docs/http-api.md) and of the review console's search: raw
 * query parameters in, a checked `SearchQuery` out, or `invalid_request` naming the parameter.
 * Unknown parameters are refused too: a misspelt filter silently ignored would list every
 * operation of the account to someone who believes they are looking at one agent run.
 */
import { RouteError, validateMethod, validateRoute } from '../core/route.js';
import { compilePattern, PatternError, type RoutePattern } from '../policies/route-match.js';
import { OPERATION_STATES, type OperationState } from './states.js';
import { decodeListCursor, questionOf, type CursorRules, type ListOrder } from '../core/list-cursor.js';
import { isAccountId } from '../principals/accounts.js';
import { accountIdParam, integerParam, onlyParams, paramError, singleParam, timeParam, type RawParams } from './query-params.js';

export type SearchOrder = ListOrder;

/** The filters as a cursor carries them (core/list-cursor.ts): normalised, method upper-cased, times as stored. */
export type SearchFilters = {
  agent_run_id?: string;
  business_key?: string;
  fingerprint?: string;
  idempotency_key?: string;
  method?: string;
  route?: string;
  state?: OperationState;
  since?: string;
  until?: string;
};

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
/** Every query parameter of the search: `GET /v1/operations` declares these as the ones it takes. */
export const SEARCH_PARAM_NAMES: readonly string[] = [...FILTER_NAMES, 'account_id', 'order', 'limit', 'cursor'];
export const MAX_SEARCH_PAGE = 1000;
const DEFAULT_PAGE = 100;

const FINGERPRINT = /^[0-9a-f]{64}$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7E]{1,255}$/;

/** What a search cursor may hold: its filters are read as the parameters are, and none other. */
const CURSOR_RULES: CursorRules<SearchFilters> = {
  idPrefix: 'op',
  isAccountId,
  filters: (raw) => {
    onlyParams(raw as RawParams, FILTER_NAMES);
    return parseFilters(raw as RawParams);
  },
};

export function parseSearchParams(raw: RawParams): SearchQuery {
  onlyParams(raw, SEARCH_PARAM_NAMES, 'this list');
  const filters = parseFilters(raw);
  const accountParam = accountIdParam(raw);
  const orderParam = singleParam(raw, 'order');
  if (orderParam !== undefined && orderParam !== 'asc' && orderParam !== 'desc') throw paramError('order', 'must be asc or desc');
  const limit = integerParam(raw, 'limit', { fallback: DEFAULT_PAGE, min: 1, max: MAX_SEARCH_PAGE });
  const cursorParam = singleParam(raw, 'cursor');
  const cursor = cursorParam === undefined ? null : decodeListCursor(cursorParam, CURSOR_RULES);
  const asked = questionOf(cursor, { account: accountParam, filters, order: orderParam }, 'desc');
  if (asked.filters.since !== undefined && asked.filters.until !== undefined && asked.filters.since >= asked.filters.until) {
    throw paramError('until', 'must be later than since');
  }
  return {
    accountId: asked.account ?? undefined,
    filters: asked.filters,
    routePattern: asked.filters.route !== undefined && isPattern(asked.filters.route) ? compilePattern('GET', asked.filters.route) : null,
    order: asked.order,
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
