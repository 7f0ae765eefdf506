import { sql, type InsertQueryBuilder, type RawBuilder } from 'kysely';
import type { Database, EventsTable } from '../../schema/database.js';
import { EVENT_HEADER, EVENT_ROW_COLUMNS, type EventHeader, pushHeaderRow } from '../core/event-shape.js';
import { affectedRows, compiledOnce } from '../store/compiled-statement.js';
import type { MerkleFrontier } from '../core/merkle.js';
import type { Db, Dialect } from '../store/store.js';

/** The events table's row is the header and its hash and payload: tsc fails here if schema/database.ts drifts from event-shape.ts. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const eventsRowIsHeader: Same<EventsTable, EventHeader & { hash: string; payload: Buffer | null }> = true;
void eventsRowIsHeader;

/** Each column's PostgreSQL type, so that a parameter sent as null still has one. */
const PG_TYPE = { seq: '::bigint', text: '', 'text?': '::text', 'hex64?': '::text', 'int?': '::integer' } as const;
const CASTS = EVENT_ROW_COLUMNS.map((c) => sql.raw(c === 'hash' ? '' : c === 'payload' ? '::bytea' : PG_TYPE[EVENT_HEADER[c]]));
const INSERT_COLUMNS = sql.raw(EVENT_ROW_COLUMNS.join(', '));

/** An account's chain head as stored in `chains`. */
export interface ChainHead {
  size: number;
  head_hash: string;
  /** The Merkle frontier as JSON (perfect subtree roots, largest first). */
  frontier: string;
  checkpoint_size: number;
  /**
   * The `ts` of the event at `size` (null before the first): the next event's is never earlier.
   * Not a column of `chains`: read with the head, or remembered with it (the hash covers it).
   */
  last_ts: string | null;
  /**
   * `frontier` itself, when this instance built the head (a remembered guess, head-guesses.ts):
   * the next append clones it instead of parsing the JSON. Never changed once in a head.
   */
  merkle?: MerkleFrontier;
}

/**
 * Writes the next events (one or a run of them, in seq order) and moves the chain head
 * from `from` to `to`, only if the stored head is still exactly `from` (a compare-and-set
 * on size, hash and checkpoint size; the same hash at the same size means the same chain,
 * so the frontier `to` was computed from matches too). False, with nothing written, when
 * it is not.
 */
export function advanceChain(dialect: Dialect, trx: Db, accountId: string, from: ChainHead, to: ChainHead, events: EventsTable[]): Promise<boolean> {
  return dialect === 'postgres' ? advancePostgres(trx, accountId, from, to, events) : advanceSqlite(trx, accountId, from, to, events);
}

/** SQLite: two in-process statements under the writer lock; the events are inserted only once the head moved. */
async function advanceSqlite(trx: Db, accountId: string, from: ChainHead, to: ChainHead, events: EventsTable[]): Promise<boolean> {
  if (affectedRows(await moveHead(trx, { accountId, from, to })) !== 1) return false;
  await insertEvents(trx, events);
  return true;
}

// Every append runs these two: compiled once per shape (compiled-statement.ts).
const moveHead = compiledOnce(
  (db, { accountId, from, to }: { accountId: string; from: ChainHead; to: ChainHead }) => db.updateTable('chains')
    .set({ size: to.size, head_hash: to.head_hash, frontier: to.frontier, checkpoint_size: to.checkpoint_size })
    .where('account_id', '=', accountId).where('size', '=', from.size)
    .where('head_hash', '=', from.head_hash).where('checkpoint_size', '=', from.checkpoint_size),
  ({ accountId, from, to }) => [to.size, to.head_hash, to.frontier, to.checkpoint_size, accountId, from.size, from.head_hash, from.checkpoint_size],
);

const insertEvents = compiledOnce(
  // Columns in one fixed order, so the text made for the first run of N events binds every later one.
  (db, events: EventsTable[]) => db.insertInto('events').values(events.map((event) => Object.fromEntries(EVENT_ROW_COLUMNS.map((c) => [c, event[c]])) as unknown as EventsTable)),
  eventRowValues,
  (events) => `${events.length}`,
);

/**
 * The events' values in EVENT_ROW_COLUMNS order, one list for all of them: an insert's parameters.
 * A plain loop: `flatMap` over a `map` per event cost ~1.4 µs more per event (BENCHMARKS.md, tenth session).
 */
function eventRowValues(events: readonly EventsTable[]): unknown[] {
  const values: unknown[] = [];
  for (const event of events) {
    pushHeaderRow(values, event);
    values.push(event.hash, event.payload);
  }
  return values;
}

/**
 * PostgreSQL: one statement, one round trip. Round trips made while holding an
 * account's chain-head row lock bound that account's event rate across every
 * instance, so the head moves and the event is inserted together: the insert
 * selects from the update's RETURNING, and so writes nothing when the head had moved.
 *
 * The head row is locked first (FOR UPDATE) and compared after: under READ COMMITTED an
 * UPDATE's own WHERE is judged on the row as the statement's snapshot saw it, so a
 * compare-and-set built on a head that another transaction was still writing would never
 * match, even once that transaction committed. FOR UPDATE waits for it and returns the row as
 * it committed; the UPDATE then writes that row.
 */
async function advancePostgres(trx: Db, accountId: string, from: ChainHead, to: ChainHead, events: EventsTable[]): Promise<boolean> {
  return affectedRows(await advanceHeadAndInsert(trx, { accountId, from, to, events })) === events.length;
}

/**
 * A row of another table that must be inserted with the events, or not at all: a claim's new
 * operation. It is written by the same statement on PostgreSQL, so a claim whose guessed head
 * holds is one round trip; elsewhere `insert` runs on its own, first.
 */
export interface RowInsert {
  /** The INSERT … ON CONFLICT DO NOTHING (Kysely builds it; `parameters` are the values it binds, in order). */
  query(db: Db): InsertQueryBuilder<Database, any, any>;
  parameters(): readonly unknown[];
  /** Tells apart rows of different columns (compiled-statement.ts). */
  shape(): string;
  /** The insert alone: false when a unique constraint already held the row. */
  insert(trx: Db): Promise<boolean>;
}

/**
 * PostgreSQL: inserts `first` and, only if it was inserted, moves the head and inserts the events
 * (as advancePostgres), in one statement. `inserted` false: a unique constraint held the row and
 * nothing was written; `advanced` false with `inserted` true: the row is in, the head had moved.
 */
export async function insertAndAdvance(
  trx: Db, first: RowInsert, accountId: string, from: ChainHead, to: ChainHead, events: EventsTable[],
): Promise<{ inserted: boolean; advanced: boolean }> {
  const result = await insertFirstAndAdvance(trx, { first, accountId, from, to, events });
  const row = result.rows[0] as { inserted: number; appended: number };
  return { inserted: row.inserted === 1, advanced: row.appended === events.length };
}

interface ChainStep {
  accountId: string;
  from: ChainHead;
  to: ChainHead;
  events: EventsTable[];
}

/**
 * Locks the head row first and compares after (see advancePostgres); `after` names a CTE whose
 * rows the head move also needs (the row inserted first), none when absent.
 */
function headMove({ accountId, from, to, events }: ChainStep, after: RawBuilder<unknown> | null) {
  const rows = events.map((event) => sql`(${sql.join(EVENT_ROW_COLUMNS.map((c, i) => sql`${event[c]}${CASTS[i]}`))})`);
  return {
    head: sql`head AS (
        SELECT size, head_hash, checkpoint_size FROM chains WHERE account_id = ${accountId} FOR UPDATE
      ), advanced AS (
        UPDATE chains SET size = ${to.size}, head_hash = ${to.head_hash}, frontier = ${to.frontier}, checkpoint_size = ${to.checkpoint_size}
        FROM head${after ?? sql``}
        WHERE chains.account_id = ${accountId} AND head.size = ${from.size} AND head.head_hash = ${from.head_hash} AND head.checkpoint_size = ${from.checkpoint_size}
        RETURNING 1
      )`,
    insert: sql`INSERT INTO events (${INSERT_COLUMNS}) SELECT v.* FROM (VALUES ${sql.join(rows)}) AS v CROSS JOIN advanced`,
  };
}

const headMoveParameters = ({ accountId, from, to, events }: ChainStep): unknown[] => [
  accountId, to.size, to.head_hash, to.frontier, to.checkpoint_size, accountId, from.size, from.head_hash, from.checkpoint_size,
  ...eventRowValues(events),
];

// Every PostgreSQL append runs one of these two: compiled once per shape (compiled-statement.ts).
const advanceHeadAndInsert = compiledOnce(
  (db, step: ChainStep) => {
    const { head, insert } = headMove(step, null);
    const statement = sql`WITH ${head} ${insert}`;
    return { compile: () => statement.compile(db) };
  },
  headMoveParameters,
  ({ events }) => `${events.length}`,
);

const insertFirstAndAdvance = compiledOnce(
  (db, step: ChainStep & { first: RowInsert }) => {
    const { head, insert } = headMove(step, sql`, first`);
    const statement = sql`
      WITH first AS (${step.first.query(db).returning(sql<number>`1`.as('one'))}), ${head}, appended AS (${insert} RETURNING 1)
      SELECT (SELECT count(*) FROM first)::integer AS inserted, (SELECT count(*) FROM appended)::integer AS appended`;
    return { compile: () => statement.compile(db) };
  },
  (step) => [...step.first.parameters(), ...headMoveParameters(step)],
  ({ first, events }) => `${first.shape()}\0${events.length}`,
);
