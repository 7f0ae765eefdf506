/**
 * The cursor of every keyset-paged list (docs/http-api.md, Lists): opaque to callers, it
 * carries the question a page answered — the account, the filters, the order — with the
 * position where the page ended, so that a page is always the continuation of the same
 * question. A position means something only in the order of the rows that question selects:
 * continued under other filters or another account it skips rows without a word, so the next
 * page may repeat the question but not change it.
 *
 * Not signed, and it grants nothing: the list that reads one checks every filter in it again as
 * if it were a query parameter, and the caller's right to read its account on every page.
 */
import { paramError } from './query-param-error.js';

export type ListOrder = 'asc' | 'desc';

/** A list's filters by query parameter name, normalised as the list compares them; a filter not given is absent. */
export type ListFilters = Readonly<Record<string, string | number>>;

export interface ListCursor<F extends ListFilters = ListFilters> {
  /** The account read; null for an admin's list of every account. */
  account: string | null;
  filters: F;
  order: ListOrder;
  /** The sort time of the page's last row, as stored, and its id. */
  at: string;
  id: string;
}

/** What a query asks for itself; each part absent when the query does not say. */
export interface GivenQuestion<F extends ListFilters> {
  account?: string | null;
  filters: Partial<F>;
  order?: ListOrder;
}

export type ListQuestion<F extends ListFilters> = Pick<ListCursor<F>, 'account' | 'filters' | 'order'>;

/**
 * What one list's cursors may hold, checked as that list checks its query parameters: `filters`
 * returns them normalised, or throws (anything) on a value the list would refuse.
 */
export interface CursorRules<F extends ListFilters> {
  /** Its rows' ids start `<idPrefix>_`. */
  idPrefix: string;
  isAccountId: (value: string) => boolean;
  filters: (raw: ListFilters) => F;
}

const STORED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NOT_OURS = 'is not a cursor this server gave out';

export function encodeListCursor(cursor: ListCursor): string {
  const { account, filters, order, at, id } = cursor;
  return Buffer.from(JSON.stringify({ v: 1, account, filters, order, at, id }), 'utf8').toString('base64url');
}

/** A cursor this server gave out for the list of `rules`, every value in it checked again; else a refusal naming `cursor`. */
export function decodeListCursor<F extends ListFilters>(text: string, rules: CursorRules<F>): ListCursor<F> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw paramError('cursor', NOT_OURS);
  }
  if (!isObject(value) || value.v !== 1 || !isObject(value.filters)) throw paramError('cursor', NOT_OURS);
  const { account, order, at, id } = value;
  if ((account !== null && !(typeof account === 'string' && rules.isAccountId(account))) || (order !== 'asc' && order !== 'desc')
    || typeof at !== 'string' || !STORED_TIME.test(at) || typeof id !== 'string' || !isId(id, rules.idPrefix)
    || !Object.values(value.filters).every(isFilterValue)) {
    throw paramError('cursor', NOT_OURS);
  }
  let filters: F;
  try {
    filters = rules.filters(value.filters as ListFilters);
  } catch {
    throw paramError('cursor', NOT_OURS);
  }
  return { account, filters, order, at, id };
}

/**
 * The question a page asks: the cursor's when there is one, which the query may repeat (a
 * client that sends its filters with every page) but not change; else the query's own, with
 * the list's `defaultOrder`.
 */
export function questionOf<F extends ListFilters>(cursor: ListCursor<F> | null, given: GivenQuestion<F>, defaultOrder: ListOrder): ListQuestion<F> {
  if (!cursor) return { account: given.account ?? null, filters: withoutAbsent(given.filters), order: given.order ?? defaultOrder };
  for (const [name, value] of Object.entries(given.filters)) {
    if (value !== undefined && value !== cursor.filters[name]) throw paramError('cursor', `was made for other filters (${name} differs): start again without a cursor`);
  }
  if (given.account !== undefined && given.account !== cursor.account) throw paramError('cursor', 'was made for another account_id: start again without a cursor');
  if (given.order !== undefined && given.order !== cursor.order) throw paramError('cursor', 'was made for the other order: start again without a cursor');
  return { account: cursor.account, filters: cursor.filters, order: cursor.order };
}

function withoutAbsent<F extends ListFilters>(filters: Partial<F>): F {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)) as F;
}

function isId(value: string, prefix: string): boolean {
  return value.startsWith(`${prefix}_`) && /^[A-Za-z0-9_-]{1,64}$/.test(value.slice(prefix.length + 1));
}

function isFilterValue(value: unknown): boolean {
  return (typeof value === 'string' && value.length > 0 && value.length <= 1024) || Number.isSafeInteger(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
