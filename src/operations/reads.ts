import { DomainError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { EVENT_HEADER_FIELDS, type EventHeader, type EventHeaderField } from '../core/event-shape.js';
import { operationJson, type OperationJson, type OperationRow } from './operation-json.js';
import { lockOperation } from './operation-rows.js';
import { expireIfDue } from './transitions.js';
import { isLeased } from './states.js';
import { sweepExpiredLeases } from './sweeper.js';
import type { OperationDeps } from './claim-types.js';

export interface ListQuery {
  accountId: string;
  idempotencyKey?: string;
  state?: string;
  limit: number;
  cursor?: string;
}

export interface OperationPage {
  items: OperationJson[];
  next_cursor: string | null;
}

/** One operation; a lease that ran out shows as `unknown` on this read (and is recorded as such). */
export async function readOperation(deps: OperationDeps, accountId: string, id: string): Promise<OperationJson> {
  const row = await deps.store.db.selectFrom('operations').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new DomainError('not_found', `no operation ${id}`);
  if (!isLeased(row.state) || row.lease_expires_at === null || row.lease_expires_at > deps.clock.now()) {
    return operationJson(deps.store.db, deps.ledger, row);
  }
  // Only an expired lease pays for a write transaction.
  return deps.store.transact(async (trx) => {
    const locked = await lockOperation(deps.store, trx, accountId, id);
    return operationJson(trx, deps.ledger, await expireIfDue(trx, deps.ledger, locked!, deps.clock.now()));
  });
}

/** Keyset pagination on the operation id: stable under inserts, and the cursor is opaque to callers. */
export async function listOperations(deps: OperationDeps, query: ListQuery): Promise<OperationPage> {
  // Leases that ran out are settled first, so `?state=unknown` is current, not up to a sweep behind.
  await sweepExpiredLeases(deps, query.accountId);
  let select = deps.store.db.selectFrom('operations').selectAll().where('account_id', '=', query.accountId);
  if (query.idempotencyKey !== undefined) select = select.where('idempotency_key', '=', query.idempotencyKey);
  if (query.state !== undefined) select = select.where('state', '=', query.state);
  if (query.cursor !== undefined) select = select.where('id', '>', decodeCursor(query.cursor));
  const rows: OperationRow[] = await select.orderBy('id').limit(query.limit + 1).execute();
  const page = rows.slice(0, query.limit);
  const items = await Promise.all(page.map((row) => operationJson(deps.store.db, deps.ledger, row)));
  return { items, next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]!.id) : null };
}

/** Header fields the timeline leaves out: the operation and account are the request's, the chain links are the audit API's. */
const NOT_IN_TIMELINE = ['account_id', 'operation_id', 'payload_hash', 'prev_hash'] as const;
const TIMELINE_FIELDS = EVENT_HEADER_FIELDS.filter((f) => !(NOT_IN_TIMELINE as readonly string[]).includes(f)) as Array<Exclude<EventHeaderField, (typeof NOT_IN_TIMELINE)[number]>>;

/** One event of an operation's timeline: its header (less NOT_IN_TIMELINE), hash and, where the caller may see it, the payload. */
export type TimelineEvent = Omit<EventHeader, (typeof NOT_IN_TIMELINE)[number]> & { hash: string; payload?: JsonValue | null };

/**
 * The operation's audit events in order: which agent run sent each request, with
 * which key and fingerprint, and what came back. `showPayload` decides per event
 * type whether the caller may see the decrypted payload.
 */
export async function readTimeline(
  deps: OperationDeps, accountId: string, id: string, showPayload: (type: string) => boolean,
): Promise<{ operation_id: string; events: TimelineEvent[] }> {
  await readOperation(deps, accountId, id);
  const rows = await deps.store.db.selectFrom('events')
    .select([...TIMELINE_FIELDS, 'hash', 'payload_hash'])
    .where('account_id', '=', accountId).where('operation_id', '=', id).orderBy('seq').execute();
  const events = await Promise.all(rows.map(async ({ payload_hash, ...event }) => {
    if (!showPayload(event.type)) return event;
    return { ...event, payload: payload_hash === null ? null : await deps.ledger.readPayload(deps.store.db, accountId, event.seq) };
  }));
  return { operation_id: id, events };
}

const CURSOR_ID = /^op_[A-Za-z0-9_-]{1,64}$/;

function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!CURSOR_ID.test(id)) throw new DomainError('invalid_request', 'the query parameter "cursor" is not a cursor this server gave out');
  return id;
}
