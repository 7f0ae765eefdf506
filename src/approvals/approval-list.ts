/**
 * `GET /v1/approvals` (docs/http-api.md): an account's approvals, oldest request first (the one
 * closest to expiring on top), keyset-paged on (requested_at, id) with the cursor every list
 * uses (core/list-cursor.ts), which carries the account and the state filter with the position.
 */
import { requireRole, type Principal } from '../principals/roles.js';
import { isAccountId } from '../principals/accounts.js';
import { decodeListCursor, encodeListCursor, questionOf, type CursorRules } from '../core/list-cursor.js';
import type { ApprovalView } from './seam.js';
import { viewOf, type ApprovalDeps } from './records.js';

export const APPROVAL_STATES = ['pending', 'approved', 'denied', 'expired'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

export interface ApprovalListQuery {
  state?: ApprovalState;
  /** Honoured for admins only: every other caller reads its own account. */
  accountId?: string;
  limit: number;
  cursor?: string;
}

export interface ApprovalPage {
  items: ApprovalView[];
  next_cursor: string | null;
}

type ApprovalFilters = { state?: ApprovalState };

/** Oldest request first: the one order of the list. */
const ORDER = 'asc';

const CURSOR_RULES: CursorRules<ApprovalFilters> = {
  idPrefix: 'apr',
  isAccountId,
  filters: (raw) => {
    const { state, ...rest } = raw;
    if (Object.keys(rest).length > 0 || (state !== undefined && !(APPROVAL_STATES as readonly unknown[]).includes(state))) throw new Error('not a filter of this list');
    return state === undefined ? {} : { state: state as ApprovalState };
  },
};

export async function listApprovals(deps: ApprovalDeps, principal: Principal, query: ApprovalListQuery): Promise<ApprovalPage> {
  requireRole(principal, 'approver', 'admin');
  const now = deps.clock.now();
  const cursor = query.cursor === undefined ? null : decodeListCursor(query.cursor, CURSOR_RULES);
  // An admin reads the account it names, or every account; an approver always its own, so a
  // cursor made for another account is refused here rather than read in the wrong one.
  const account = principal.roles.includes('admin') ? query.accountId : principal.account_id;
  const asked = questionOf(cursor, { account, filters: { state: query.state }, order: ORDER }, ORDER);
  const { state } = asked.filters;
  let q = deps.store.db.selectFrom('approvals').selectAll();
  if (asked.account !== null) q = q.where('account_id', '=', asked.account);
  if (state === 'pending') q = q.where('state', '=', 'pending').where('expires_at', '>', now);
  else if (state === 'expired') q = q.where((eb) => eb.or([eb('state', '=', 'expired'), eb.and([eb('state', '=', 'pending'), eb('expires_at', '<=', now)])]));
  else if (state) q = q.where('state', '=', state);
  if (cursor) q = q.where((eb) => eb.or([eb('requested_at', '>', cursor.at), eb.and([eb('requested_at', '=', cursor.at), eb('id', '>', cursor.id)])]));
  const rows = await q.orderBy('requested_at').orderBy('id').limit(query.limit + 1).execute();
  const page = rows.slice(0, query.limit);
  const items: ApprovalView[] = [];
  for (const row of page) items.push(await viewOf(deps.store.db, deps.ledger, row, now));
  const last = page[page.length - 1];
  const next_cursor = rows.length > query.limit && last
    ? encodeListCursor({ ...asked, at: last.requested_at, id: last.id })
    : null;
  return { items, next_cursor };
}
