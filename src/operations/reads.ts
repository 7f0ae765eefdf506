import { DomainError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { EVENT_HEADER_FIELDS, type EventHeader, type EventHeaderField } from '../core/event-shape.js';
import { operationJson, type OperationJson } from './operation-json.js';
import { lockOperation } from './operation-rows.js';
import { expireIfDue } from './transitions.js';
import { isLeased } from './states.js';
import type { OperationDeps } from './claim-types.js';
import type { WorkScope } from '../store/work-scope.js';

/** One operation; a lease that ran out shows as `unknown` on this read (and is recorded as such). */
export async function readOperation(deps: OperationDeps, accountId: string, id: string, workScope?: WorkScope): Promise<OperationJson> {
  const row = await deps.store.db.selectFrom('operations').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new DomainError('not_found', `no operation ${id}`);
  if (!isLeased(row.state) || row.lease_expires_at === null || row.lease_expires_at > deps.clock.now()) {
    return operationJson(deps.store.db, deps.ledger, row);
  }
  // Only an expired lease pays for a write transaction.
  return deps.store.transact(async (trx) => {
    const locked = await lockOperation(deps.store, trx, accountId, id);
    return operationJson(trx, deps.ledger, await expireIfDue(trx, deps.ledger, locked!, deps.clock.now()));
  }, { scope: workScope });
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
