/**
 * Search of an account's operations (docs/http-api.md): every filter combinable, ordered by
 * (created_at, id) newest first or oldest first, keyset-paged. Each single filter has an
 * index ending in (created_at, id) (migration 0004), so a first page reads its rows in order.
 */
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Dialect, Store } from '../store/store.js';
import type { RoutePattern } from '../policies/route-match.js';
import { operationsJson, type OperationJson, type OperationRow } from './operation-json.js';
import { sweepExpiredLeases } from './sweeper.js';
import type { OperationDeps } from './claim-types.js';
import { encodeListCursor } from '../core/list-cursor.js';
import type { SearchQuery } from './search-params.js';

export interface OperationPage {
  items: OperationJson[];
  next_cursor: string | null;
}

const EXACT = ['agent_run_id', 'business_key', 'fingerprint', 'idempotency_key', 'method', 'state'] as const;

export async function searchOperations(deps: OperationDeps, accountId: string, query: SearchQuery): Promise<OperationPage> {
  // Leases that ran out are settled first, so `?state=unknown` is current, not up to a sweep behind.
  await sweepExpiredLeases(deps, accountId);
  const rows = await searchRows(deps.store, accountId, query);
  const page = rows.slice(0, query.limit);
  const items = await operationsJson(deps.store.db, deps.ledger, accountId, page);
  const last = page[page.length - 1];
  const next_cursor = rows.length > query.limit && last
    ? encodeListCursor({ account: accountId, filters: query.filters, order: query.order, at: last.created_at, id: last.id })
    : null;
  return { items, next_cursor };
}

/** The rows of one page plus one (to know whether another page follows). Exported for the bench's query plans. */
export function searchSelect(store: Store, accountId: string, query: SearchQuery) {
  const { filters } = query;
  let select = store.db.selectFrom('operations').selectAll().where('account_id', '=', accountId);
  for (const name of EXACT) {
    const value = filters[name];
    if (value !== undefined) select = select.where(name, '=', value);
  }
  if (filters.route !== undefined) {
    select = query.routePattern ? select.where(routePatternMatches(store.dialect, query.routePattern)) : select.where('route', '=', filters.route);
  }
  if (filters.since !== undefined) select = select.where('created_at', '>=', filters.since);
  if (filters.until !== undefined) select = select.where('created_at', '<', filters.until);
  if (query.after) {
    const { created_at, id } = query.after;
    // A row value comparison: both stores read it as one range on the index's (created_at, id) tail.
    select = select.where(query.order === 'desc' ? sql<SqlBool>`(created_at, id) < (${created_at}, ${id})` : sql<SqlBool>`(created_at, id) > (${created_at}, ${id})`);
  }
  return select.orderBy('created_at', query.order).orderBy('id', query.order).limit(query.limit + 1);
}

function searchRows(store: Store, accountId: string, query: SearchQuery): Promise<OperationRow[]> {
  return searchSelect(store, accountId, query).execute();
}

/**
 * A route pattern as SQL: the literal segments must match exactly (GLOB on SQLite, LIKE with
 * escapes on PostgreSQL: both case-sensitive), each `*` one or more characters, and the number
 * of `/` must be the pattern's, so a `*` never spans two segments. On SQLite the route index is
 * kept out (`+route`): a pattern usually matches a large share of the account, and reading the
 * (created_at, id) index in order then finds a page sooner than sorting every match.
 */
function routePatternMatches(dialect: Dialect, pattern: RoutePattern): Expression<SqlBool> {
  const slashes = pattern.segments.length;
  const slashCount = sql`length(route) - length(replace(route, '/', ''))`;
  if (dialect === 'sqlite') {
    const glob = '/' + pattern.segments.map((s) => (s === null ? '?*' : s)).join('/');
    return sql<SqlBool>`(+route GLOB ${glob} AND ${slashCount} = ${slashes})`;
  }
  const like = '/' + pattern.segments.map((s) => (s === null ? '_%' : s.replace(/[\\%_]/g, (c) => `\\${c}`))).join('/');
  return sql<SqlBool>`(route LIKE ${like} AND ${slashCount} = ${slashes})`;
}
