/**
 * The search cursor: opaque to callers, it carries the account, the filters and the order
 * with the position, so a page is always the continuation of the same question. It is not
 * signed: every value in it is checked again as if it were a query parameter, and the
 * caller's right to read its account is checked on every page.
 */
import type { OperationState } from './states.js';
import { OPERATION_STATES } from './states.js';
import { paramError } from './query-params.js';
import { isAccountId } from '../principals/accounts.js';

export type SearchOrder = 'desc' | 'asc';

/** The filters exactly as they travel in a cursor (normalised: method upper-cased, times as stored). */
export interface SearchFilters {
  agent_run_id?: string;
  business_key?: string;
  fingerprint?: string;
  idempotency_key?: string;
  method?: string;
  route?: string;
  state?: OperationState;
  since?: string;
  until?: string;
}

export interface SearchCursor {
  account: string | null;
  filters: SearchFilters;
  order: SearchOrder;
  at: string;
  id: string;
}

const STRING_FILTERS = ['agent_run_id', 'business_key', 'fingerprint', 'idempotency_key', 'method', 'route', 'since', 'until'] as const;
const CREATED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeSearchCursor(cursor: SearchCursor): string {
  return Buffer.from(JSON.stringify({ v: 1, ...cursor }), 'utf8').toString('base64url');
}

export function decodeSearchCursor(text: string): SearchCursor {
  const refuse = () => paramError('cursor', 'is not a cursor this server gave out');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (!isObject(value) || value.v !== 1 || !isObject(value.filters)) throw refuse();
  const { account, order, at, id } = value;
  if ((account !== null && !isAccountId(account)) || (order !== 'asc' && order !== 'desc')) throw refuse();
  if (typeof at !== 'string' || !CREATED_AT.test(at) || typeof id !== 'string' || !/^op_[A-Za-z0-9_-]{1,64}$/.test(id)) throw refuse();
  const filters: SearchFilters = {};
  for (const [name, raw] of Object.entries(value.filters)) {
    if (name === 'state') {
      if (!(OPERATION_STATES as readonly unknown[]).includes(raw)) throw refuse();
      filters.state = raw as OperationState;
    } else if ((STRING_FILTERS as readonly string[]).includes(name) && typeof raw === 'string' && raw.length > 0 && raw.length <= 1024) {
      filters[name as (typeof STRING_FILTERS)[number]] = raw;
    } else {
      throw refuse();
    }
  }
  return { account, filters, order, at, id };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
