import type { Db, Store, UnitOfWork } from '../store/store.js';
import type { Clock } from '../core/time.js';
import { epochMsOf, rfc3339 } from '../core/time.js';
import { canonicalBytes } from '../core/jcs.js';
import { sha256Hex } from '../core/hash.js';
import { eventHash } from '../core/event-hash.js';
import { GENESIS_PREV_HASH, newEventHeader } from '../core/event-shape.js';
import { MerkleFrontier, type CompletedSubtree } from '../core/merkle.js';
import { openPayload, sealPayload } from '../core/seal.js';
import type { Sodium } from '../core/sodium.js';
import type { SigningKey } from '../core/signing-key.js';
import type { JsonValue } from '../core/json.js';
import { DomainError, InvariantError } from '../core/errors.js';
import type { EventsTable } from '../../schema/database.js';
import type { DataKeys } from './data-keys.js';
import type { AppendedEvent, EventInput } from './event-input.js';
import { signCheckpoint, type Checkpoint } from './checkpoints.js';
import { withCosignaturesOne, type CosignedCheckpoint } from './cosignatures.js';
import { refuseRootAgainstSignedHistory } from './signed-history.js';
import { advanceChain, insertAndAdvance, type ChainHead, type RowInsert } from './chain-write.js';
import { ChainTurns } from './chain-turns.js';
import { HeadGuesses } from './head-guesses.js';
import { OpenedPayloads } from './opened-payloads.js';
import { STORED_LEVEL, storeSubtrees } from './merkle-nodes.js';
import type { WorkScope } from '../store/work-scope.js';
import { compiledOnce, firstRow } from '../store/compiled-statement.js';
import { startPeriodicTask, type PeriodicTask } from '../core/periodic-task.js';

/** writeNext's answer when the row to insert first was already there: nothing was written. */
const ROW_TAKEN = Symbol('row taken');

/** A checkpoint is signed in the append that crosses this many events since the last one. */
export const CHECKPOINT_EVERY_EVENTS = 1000;
/** ...and, while events arrive, a timer signs one at least this often (docs/formats.md, Checkpoints). */
const CHECKPOINT_INTERVAL_MS = 10_000;

/** Events written by one statement at most (PostgreSQL takes up to 65,535 parameters; an event has 18). */
const MAX_EVENTS_PER_WRITE = 500;

/** Every replay reads the stored response's payload: compiled once (compiled-statement.ts). */
const selectPayload = compiledOnce(
  (db, { accountId, seq }: { accountId: string; seq: number }) => db.selectFrom('events').select('payload').where('account_id', '=', accountId).where('seq', '=', seq),
  ({ accountId, seq }) => [accountId, seq],
);

/**
 * The append-only, hash-chained log: one chain per account. `append` runs inside
 * the caller's transaction, so a state change and its event commit together or not at all.
 */
export class Ledger {
  /** The head each account's chain had after this instance's last append (head-guesses.ts). */
  private readonly guesses: HeadGuesses;
  /** PostgreSQL only: concurrent appends to one account write its head in turn (chain-turns.ts). */
  private readonly turns: ChainTurns | null;
  /** Payloads of committed events this instance has decrypted (opened-payloads.ts). */
  private readonly opened = new OpenedPayloads();
  /**
   * Accounts whose in-memory frontier (in the head guesses) was checked against the log
   * (signed-history.ts) and has since only been advanced here: their due checkpoints need no
   * check again. Cleared for an account whenever its frontier is loaded from the database.
   */
  private readonly checkedFrontiers = new Set<string>();
  /** How each chain head write found the head it built on, for /metrics. */
  readonly headWrites = { guessed: 0, guess_missed: 0, read: 0 };

  constructor(
    private readonly store: Store,
    private readonly sodium: Sodium,
    private readonly dataKeys: DataKeys,
    private readonly signingKey: SigningKey,
    readonly ledgerId: string,
    private readonly clock: Clock,
  ) {
    this.turns = store.dialect === 'postgres' ? new ChainTurns() : null;
    this.guesses = new HeadGuesses(clock);
  }

  async append(trx: Db, input: EventInput): Promise<AppendedEvent> {
    // Null only when a row to insert first was already there; there is none here.
    return (await this.appendRun(trx, [input], null))![0]!;
  }

  /**
   * Inserts `first` and appends the event that records it, in the caller's transaction; null, with
   * nothing written, when a unique constraint already held the row (a claim whose key is taken).
   * On PostgreSQL, when this instance's guess of the head holds, both go in one statement: a
   * claim's insert and its event are then one round trip.
   */
  async appendAfterInsert(trx: Db, first: RowInsert, input: EventInput): Promise<AppendedEvent | null> {
    const appended = await this.appendRun(trx, [input], first);
    return appended && appended[0]!;
  }

  /**
   * Several events in the given order, each account's consecutive run written with one statement
   * (a sweep of a burst of expired leases writes hundreds at once: one round trip each would hold
   * the account's chain head for seconds). Same rules as `append`: inside the caller's transaction.
   */
  async appendAll(trx: Db, inputs: readonly EventInput[]): Promise<AppendedEvent[]> {
    const appended: AppendedEvent[] = [];
    for (let start = 0; start < inputs.length;) {
      let end = start + 1;
      while (end < inputs.length && inputs[end]!.account_id === inputs[start]!.account_id) end++;
      // Null only when a row to insert first was already there; there is none here.
      appended.push(...(await this.appendRun(trx, inputs.slice(start, end), null))!);
      start = end;
    }
    return appended;
  }

  /** Events of one account, in chunks that end at each checkpoint due (so one is signed at least every 1000 events). */
  private async appendRun(trx: Db, inputs: readonly EventInput[], first: RowInsert | null): Promise<AppendedEvent[] | null> {
    const accountId = inputs[0]!.account_id;
    const held = this.dataKeys.held(accountId);
    const dataKey = held !== undefined ? held : await this.dataKeys.forAccount(trx, accountId);
    // Not `await this.turns?.take(…)`: awaiting nothing still costs SQLite's appends a turn of the microtask queue.
    const turn = this.turns ? await this.turns.take(trx, accountId) : null;
    try {
      return await this.appendChunks(trx, accountId, inputs, dataKey, first);
    } finally {
      turn?.end();
    }
  }

  private async appendChunks(
    trx: Db, accountId: string, inputs: readonly EventInput[], dataKey: Uint8Array | null, first: RowInsert | null,
  ): Promise<AppendedEvent[] | null> {
    const appended: AppendedEvent[] = [];
    let rowFirst = first;
    while (appended.length < inputs.length) {
      const rest = inputs.slice(appended.length, appended.length + MAX_EVENTS_PER_WRITE);
      // The head this instance wrote last is usually still the head: write on it without reading it
      // first. When another instance, a rolled-back transaction or a checkpoint moved it, the write
      // (a compare-and-set) does nothing, and the head is locked and read as it would be without a guess.
      const guess = this.guesses.guess(accountId, this.turns?.holds(trx, accountId) ?? false);
      // A row to insert first rides on the guessed write on PostgreSQL; with no guess, or on SQLite
      // (where a statement is a call, not a round trip), it goes in on its own, first.
      if (rowFirst && (!guess || this.store.dialect !== 'postgres')) {
        if (!(await rowFirst.insert(trx))) return null;
        rowFirst = null;
      }
      const attempt = guess ? await this.writeNext(trx, guess, rest, dataKey, rowFirst) : null;
      if (attempt === ROW_TAKEN) return null;
      rowFirst = null;
      if (guess && !attempt) this.guesses.missed(accountId);
      this.headWrites[!guess ? 'read' : attempt ? 'guessed' : 'guess_missed']++;
      const written = attempt ?? await this.writeNext(trx, await this.lockChainHead(trx, accountId), rest, dataKey, null);
      if (!written || written === ROW_TAKEN) throw new InvariantError(`chain head of ${accountId} moved while locked`);
      this.turns?.wrote(trx, accountId);
      appended.push(...written);
    }
    return appended;
  }

  /**
   * Writes the events after `head` (up to the first that makes a checkpoint due) if `head` is still
   * the chain's head; null, with nothing written, if it is not. With `first` (PostgreSQL), that row
   * is inserted by the same statement: ROW_TAKEN, with nothing written, when it was already there.
   */
  private async writeNext(
    trx: Db, head: ChainHead, inputs: readonly EventInput[], dataKey: Uint8Array | null, first: RowInsert | null,
  ): Promise<AppendedEvent[] | null | typeof ROW_TAKEN> {
    if (head.merkle === undefined) this.checkedFrontiers.delete(inputs[0]!.account_id);
    const frontier = head.merkle?.clone() ?? MerkleFrontier.from(head.size, JSON.parse(head.frontier) as string[]);
    const events: EventsTable[] = [];
    const subtrees: CompletedSubtree[] = [];
    let checkpointDue = false;
    for (const input of inputs) {
      const last = events[events.length - 1];
      const event = this.nextEvent(last ? { seq: last.seq, hash: last.hash, ts: last.ts } : { seq: head.size, hash: head.head_hash, ts: head.last_ts }, input, dataKey);
      events.push(event);
      subtrees.push(...frontier.appendEventHashCollecting(event.hash, STORED_LEVEL));
      checkpointDue = event.seq - head.checkpoint_size >= CHECKPOINT_EVERY_EVENTS;
      if (checkpointDue) break;
    }
    const last = events[events.length - 1]!;
    const next: ChainHead = {
      size: last.seq, head_hash: last.hash, frontier: JSON.stringify(frontier.toJSON()),
      checkpoint_size: checkpointDue ? last.seq : head.checkpoint_size, last_ts: last.ts, merkle: frontier,
    };
    // Remembered before the write returns, so the next append to this account (in another
    // transaction, which will wait on this one's lock) already builds on these events.
    this.guesses.remember(inputs[0]!.account_id, next);
    const outcome = first
      ? await insertAndAdvance(trx, first, inputs[0]!.account_id, head, next, events)
      : { inserted: true, advanced: await advanceChain(this.store.dialect, trx, inputs[0]!.account_id, head, next, events) };
    if (!outcome.advanced) {
      // Nothing was appended. When the row was taken the head was not even compared: the guess stands.
      this.guesses.unwritten(inputs[0]!.account_id, next, outcome.inserted ? null : head);
      return outcome.inserted ? null : ROW_TAKEN;
    }
    // Once per 256 events: the subtree hashes proofs read (merkle-nodes.ts).
    if (subtrees.length > 0) await storeSubtrees(trx, inputs[0]!.account_id, subtrees);
    if (checkpointDue) {
      const accountId = inputs[0]!.account_id;
      // Checked once per frontier loaded from the database, not once per 1000 events: the check
      // reads the log's stored hashes inside the batch (~3.5 ms at 1M events; replays × 0.95).
      await this.insertCheckpoint(trx, accountId, frontier, this.checkedFrontiers.has(accountId));
      this.checkedFrontiers.add(accountId);
    }
    return events.map((event) => ({ seq: event.seq, hash: event.hash, ts: event.ts }));
  }

  /**
   * The event after `previous`, sealed and hashed.
   * Its `ts` is the clock's, but never earlier than its predecessor's: a clock stepped back (or
   * another instance's clock behind this one's) must not make the chain's time run backwards.
   */
  private nextEvent(previous: { seq: number; hash: string; ts: string | null }, input: EventInput, dataKey: Uint8Array | null): EventsTable {
    const seq = previous.seq + 1;
    const ts = rfc3339(Math.max(this.clock.now(), previous.ts === null ? 0 : epochMsOf(previous.ts)));
    const payload = input.payload === undefined || dataKey === null
      ? null
      : Buffer.from(sealPayload(this.sodium, dataKey, input.account_id, seq, canonicalBytes(input.payload)));
    // Member by member, not `{ ...input, seq, ts, … }`: see newEventHeader.
    const header = newEventHeader(input, { seq, ts, payload_hash: payload ? sha256Hex(payload) : null, prev_hash: previous.hash });
    const row = header as EventsTable;
    row.hash = eventHash(header);
    row.payload = payload;
    return row;
  }

  /** Signs a checkpoint of the account's chain as it is now (or returns the one already signed at this size). */
  async checkpoint(accountId: string, workScope?: WorkScope): Promise<Checkpoint> {
    return this.store.transact(async (trx) => {
      const head = await this.lockChainHead(trx, accountId, { create: false });
      if (!head) throw new DomainError('not_found', `account ${accountId} has no events yet`);
      const existing = await trx.selectFrom('checkpoints').selectAll()
        .where('account_id', '=', accountId).where('tree_size', '=', head.size).executeTakeFirst();
      if (existing) return existing;
      const frontier = MerkleFrontier.from(head.size, JSON.parse(head.frontier) as string[]);
      const checkpoint = await this.insertCheckpoint(trx, accountId, frontier);
      this.guesses.remember(accountId, { ...head, checkpoint_size: head.size });
      await trx.updateTable('chains').set({ checkpoint_size: head.size }).where('account_id', '=', accountId).execute();
      return checkpoint;
    }, { scope: workScope });
  }

  /** Checkpoints every chain that grew since its last one: the timer behind "at least every 10 s". */
  async checkpointGrownChains(): Promise<number> {
    const grown = await this.store.db.selectFrom('chains').select('account_id')
      .whereRef('size', '>', 'checkpoint_size').execute();
    for (const { account_id } of grown) await this.checkpoint(account_id);
    return grown.length;
  }

  /**
   * Checkpoints the grown chains every `intervalMs`: "at least every 10 s while events arrive".
   * A pass still signing when the next tick comes is not doubled (startPeriodicTask).
   */
  startCheckpointTimer(onError: (error: unknown) => void, intervalMs = CHECKPOINT_INTERVAL_MS): PeriodicTask {
    return startPeriodicTask(() => this.checkpointGrownChains(), onError, intervalMs);
  }

  /**
   * The account's newest checkpoint as it is served: its note with the witnesses' cosignature
   * lines appended, which are stored beside it (cosignatures.ts); undefined before the first.
   */
  async latestCheckpoint(accountId: string): Promise<CosignedCheckpoint | undefined> {
    const latest = await this.store.db.selectFrom('checkpoints').selectAll()
      .where('account_id', '=', accountId).orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
    return latest && withCosignaturesOne(this.store.db, latest);
  }

  /**
   * Whether events appended to the account now have their payload sealed: false once its data key
   * was shredded (its new events carry none). Shredding is for good, so a true here may be stale
   * only towards a shredding whose key no read will open anyway.
   */
  async sealsPayloads(db: Db, accountId: string): Promise<boolean> {
    return (await this.dataKeys.forAccount(db, accountId)) !== null;
  }

  /**
   * Decrypts the payload of one event; null when it has none or the account was shredded. With
   * `work`, the unit the read belongs to, what was opened is kept once that unit has committed
   * (opened-payloads.ts): a replay's stored response is read the same way every time.
   */
  async readPayload(db: Db, accountId: string, seq: number, work?: UnitOfWork): Promise<JsonValue | null> {
    const kept = this.opened.get(accountId, seq);
    if (kept !== undefined) {
      // Asked on every hit, as on every read: shredding stops a kept payload as it stops a stored one.
      const held = this.dataKeys.held(accountId);
      if (held !== undefined ? held : await this.dataKeys.forAccount(db, accountId)) return JSON.parse(kept) as JsonValue;
      this.opened.forget(accountId);
      return null;
    }
    const row = firstRow<{ payload: Buffer | null }>(await selectPayload(db, { accountId, seq }));
    if (!row?.payload) return null;
    const dataKey = await this.dataKeys.forAccount(db, accountId);
    if (!dataKey) return null;
    const text = Buffer.from(openPayload(this.sodium, dataKey, accountId, seq, row.payload)).toString('utf8');
    work?.afterCommit(() => this.opened.keep(accountId, seq, text));
    return JSON.parse(text) as JsonValue;
  }

  /** Decrypts the payloads of several events of one account in one query (a page of stored responses). */
  async readPayloads(db: Db, accountId: string, seqs: number[]): Promise<Map<number, JsonValue | null>> {
    const out = new Map<number, JsonValue | null>();
    const rows = await db.selectFrom('events').select(['seq', 'payload']).where('account_id', '=', accountId).where('seq', 'in', [...new Set(seqs)]).execute();
    const dataKey = rows.some((row) => row.payload) ? await this.dataKeys.forAccount(db, accountId) : null;
    for (const row of rows) {
      const seq = Number(row.seq);
      out.set(seq, row.payload && dataKey ? JSON.parse(Buffer.from(openPayload(this.sodium, dataKey, accountId, seq, row.payload)).toString('utf8')) as JsonValue : null);
    }
    return out;
  }

  async shred(accountId: string): Promise<boolean> {
    const shredded = await this.store.transact((trx) => this.dataKeys.shred(trx, accountId));
    this.opened.forget(accountId);
    return shredded;
  }

  /** `checked`: the frontier was checked against the log before and only advanced here since (checkedFrontiers). */
  private async insertCheckpoint(trx: Db, accountId: string, frontier: MerkleFrontier, checked = false): Promise<Checkpoint> {
    const root = frontier.root();
    if (!checked) await refuseRootAgainstSignedHistory(trx, accountId, frontier.size, root);
    const checkpoint = signCheckpoint(this.signingKey, this.ledgerId, accountId, frontier.size, root, rfc3339(this.clock.now()));
    await trx.insertInto('checkpoints').values(checkpoint).onConflict((oc) => oc.columns(['account_id', 'tree_size']).doNothing()).execute();
    return checkpoint;
  }

  /**
   * The `ts` of one event, read by a statement of its own. On PostgreSQL (read committed) a
   * `SELECT … FOR UPDATE` that waited for another instance's lock returns the head as that
   * instance's commit left it, but the subquery in its select list still reads the statement's
   * snapshot, taken before that commit: the event at the new size is not in it and `last_ts`
   * came back null, so the next event was stamped by this instance's clock alone, earlier than
   * its predecessor when that clock was behind. A new statement sees the committed event.
   */
  private async eventTs(trx: Db, accountId: string, seq: number): Promise<string | null> {
    const row = await trx.selectFrom('events').select('ts').where('account_id', '=', accountId).where('seq', '=', seq).executeTakeFirst();
    return row?.ts ?? null;
  }

  /**
   * Takes the account's chain-head row lock (making the row, at the account's first event), first
   * in every PostgreSQL transaction of the account (Store.beforeAccountBatch): one order of locks,
   * the head and then operation rows and keys, for every transaction of an account on every
   * instance. Taken where each unit first needs it, after the rows it reads and inserts, two
   * instances' batches deadlocked: one holding the head and waiting for an operation row or key
   * the other had just locked or inserted, the other waiting for the head. PostgreSQL breaks such
   * a cycle only after deadlock_timeout (1 s), so identical claims spread over three instances were
   * answered in steps of ~1.1 s (a black-box drill; test/postgres/concurrent-claims.test.ts). One
   * round trip per batch, not per unit (a statement compiled once); the units' own head writes
   * then find the lock theirs, and their appends wait for no turn (chain-turns.ts).
   */
  async holdChainHead(trx: Db, accountId: string): Promise<void> {
    const held = firstRow(await selectChainHeadLocked(trx, { store: this.store, accountId }));
    if (held === undefined) await this.lockChainHead(trx, accountId);
    this.turns?.locked(trx, accountId);
  }

  /** Locks the chain head (a row lock on PostgreSQL; SQLite's writer lock already serialises), creating it on first use. */
  private async lockChainHead(trx: Db, accountId: string): Promise<ChainHead>;
  private async lockChainHead(trx: Db, accountId: string, options: { create: false }): Promise<ChainHead | undefined>;
  private async lockChainHead(trx: Db, accountId: string, options = { create: true }): Promise<ChainHead | undefined> {
    const select = () => this.store.forUpdate(
      trx.selectFrom('chains').select(['size', 'head_hash', 'frontier', 'checkpoint_size'])
        .select((eb) => eb.selectFrom('events').select('events.ts')
          .whereRef('events.account_id', '=', 'chains.account_id').whereRef('events.seq', '=', 'chains.size').as('last_ts'))
        .where('account_id', '=', accountId),
    ).executeTakeFirst();
    const head = await select();
    if (head && head.size > 0 && head.last_ts === null) head.last_ts = await this.eventTs(trx, accountId, head.size);
    if (head || !options.create) return head;
    await trx.insertInto('chains')
      .values({ account_id: accountId, size: 0, head_hash: GENESIS_PREV_HASH, frontier: '[]', checkpoint_size: 0 })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    const created = await select();
    if (!created) throw new InvariantError(`chain head of ${accountId} vanished`);
    return created;
  }
}

/** Ledger.holdChainHead's lock, taken first in every PostgreSQL batch of an account: compiled once (compiled-statement.ts). */
const selectChainHeadLocked = compiledOnce(
  (db, { store, accountId }: { store: Store; accountId: string }) => store.forUpdate(db.selectFrom('chains').select('size').where('account_id', '=', accountId)),
  ({ accountId }) => [accountId],
);
