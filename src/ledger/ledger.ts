import type { Db, Store } from '../store/store.js';
import type { Clock } from '../core/time.js';
import { rfc3339 } from '../core/time.js';
import { canonicalBytes } from '../core/jcs.js';
import { sha256Hex } from '../core/hash.js';
import { eventHash } from '../core/event-hash.js';
import { GENESIS_PREV_HASH, toEventHeader } from '../core/event-shape.js';
import { MerkleFrontier } from '../core/merkle.js';
import { openPayload, sealPayload } from '../core/seal.js';
import type { Sodium } from '../core/sodium.js';
import type { SigningKey } from '../core/signing-key.js';
import type { JsonValue } from '../core/json.js';
import { DomainError, InvariantError } from '../core/errors.js';
import type { DataKeys } from './data-keys.js';
import type { AppendedEvent, EventInput } from './event-input.js';
import { signCheckpoint, type Checkpoint } from './checkpoints.js';
import { advanceChain, type ChainHead } from './chain-write.js';
import { STORED_LEVEL, storeSubtrees } from './merkle-nodes.js';

/** A checkpoint is signed in the append that crosses this many events since the last one. */
export const CHECKPOINT_EVERY_EVENTS = 1000;

/** Accounts whose last written head is remembered; past this the memory starts over (a miss costs one read). */
const MAX_CACHED_HEADS = 10_000;
const GUESS_PAUSE_AFTER_MISS_MS = 1000;

/**
 * The append-only, hash-chained log: one chain per account. `append` runs inside
 * the caller's transaction, so a state change and its event commit together or not at all.
 */
export class Ledger {
  /** The head each account's chain had after this instance's last append: a guess, checked on use. */
  private readonly heads = new Map<string, ChainHead>();
  /** When a guess last missed, per account. */
  private readonly missedAt = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly sodium: Sodium,
    private readonly dataKeys: DataKeys,
    private readonly signingKey: SigningKey,
    readonly ledgerId: string,
    private readonly clock: Clock,
  ) {}

  async append(trx: Db, input: EventInput): Promise<AppendedEvent> {
    const dataKey = await this.dataKeys.forAccount(trx, input.account_id);
    // The head this instance wrote last is usually still the head: write on it without reading it
    // first. When another instance, a rolled-back transaction or a checkpoint moved it, the write
    // (a compare-and-set) does nothing, and the head is locked and read as it would be without a guess.
    const guess = this.guessHead(input.account_id);
    if (guess) {
      const written = await this.writeNext(trx, guess, input, dataKey);
      if (written) return written;
      this.missedAt.set(input.account_id, this.clock.now());
    }
    const written = await this.writeNext(trx, await this.lockChainHead(trx, input.account_id), input, dataKey);
    if (!written) throw new InvariantError(`chain head of ${input.account_id} moved while locked`);
    return written;
  }

  /** Writes the event after `head` if `head` is still the chain's head; null, with nothing written, if it is not. */
  private async writeNext(trx: Db, head: ChainHead, input: EventInput, dataKey: Uint8Array | null): Promise<AppendedEvent | null> {
    const { next, event, frontier, checkpointDue, subtrees } = this.nextEvent(head, input, dataKey);
    // Remembered before the write returns, so the next append to this account (in another
    // transaction, which will wait on this one's lock) already builds on this event.
    this.rememberHead(input.account_id, next);
    if (!(await advanceChain(this.store.dialect, trx, input.account_id, head, next, event))) {
      // Appends that meanwhile built on `next` will miss as well; later ones read the real head.
      if (this.heads.get(input.account_id) === next) this.heads.delete(input.account_id);
      return null;
    }
    // Once per 256 events: the subtree hashes proofs read (merkle-nodes.ts).
    if (subtrees.length > 0) await storeSubtrees(trx, input.account_id, subtrees);
    if (checkpointDue) await this.insertCheckpoint(trx, input.account_id, frontier);
    return { seq: event.seq, hash: event.hash, ts: event.ts };
  }

  /**
   * No guessing for a while after a miss: when other instances append to the same account most
   * guesses miss, and a miss costs one round trip more than locking and reading the head at once.
   */
  private guessHead(accountId: string): ChainHead | undefined {
    const missedAt = this.missedAt.get(accountId);
    if (missedAt !== undefined && this.clock.now() - missedAt < GUESS_PAUSE_AFTER_MISS_MS) return undefined;
    return this.heads.get(accountId);
  }

  /** The event after `head`, sealed and hashed, and the head it makes. */
  private nextEvent(head: ChainHead, input: EventInput, dataKey: Uint8Array | null) {
    const seq = head.size + 1;
    const ts = rfc3339(this.clock.now());
    const payload = input.payload === undefined || dataKey === null
      ? null
      : Buffer.from(sealPayload(this.sodium, dataKey, input.account_id, seq, canonicalBytes(input.payload)));
    const { payload: _payload, ...values } = input;
    const header = toEventHeader({ ...values, seq, ts, payload_hash: payload ? sha256Hex(payload) : null, prev_hash: head.head_hash });
    const hash = eventHash(header);
    const frontier = MerkleFrontier.from(head.size, JSON.parse(head.frontier) as string[]);
    const subtrees = frontier.appendEventHashCollecting(hash, STORED_LEVEL);
    const checkpointDue = seq - head.checkpoint_size >= CHECKPOINT_EVERY_EVENTS;
    const next: ChainHead = { size: seq, head_hash: hash, frontier: JSON.stringify(frontier.toJSON()), checkpoint_size: checkpointDue ? seq : head.checkpoint_size };
    return { next, event: { ...header, hash, payload }, frontier, checkpointDue, subtrees };
  }

  private rememberHead(accountId: string, head: ChainHead): void {
    if (this.heads.size >= MAX_CACHED_HEADS) {
      this.heads.clear();
      this.missedAt.clear();
    }
    this.heads.set(accountId, head);
  }

  /** Signs a checkpoint of the account's chain as it is now (or returns the one already signed at this size). */
  async checkpoint(accountId: string): Promise<Checkpoint> {
    return this.store.transact(async (trx) => {
      const head = await this.lockChainHead(trx, accountId, { create: false });
      if (!head) throw new DomainError('not_found', `account ${accountId} has no events yet`);
      const existing = await trx.selectFrom('checkpoints').selectAll()
        .where('account_id', '=', accountId).where('tree_size', '=', head.size).executeTakeFirst();
      if (existing) return existing;
      const frontier = MerkleFrontier.from(head.size, JSON.parse(head.frontier) as string[]);
      const checkpoint = await this.insertCheckpoint(trx, accountId, frontier);
      this.rememberHead(accountId, { ...head, checkpoint_size: head.size });
      await trx.updateTable('chains').set({ checkpoint_size: head.size }).where('account_id', '=', accountId).execute();
      return checkpoint;
    });
  }

  /** Checkpoints every chain that grew since its last one: the timer behind "at least every 10 s". */
  async checkpointGrownChains(): Promise<number> {
    const grown = await this.store.db.selectFrom('chains').select('account_id')
      .whereRef('size', '>', 'checkpoint_size').execute();
    for (const { account_id } of grown) await this.checkpoint(account_id);
    return grown.length;
  }

  async latestCheckpoint(accountId: string): Promise<Checkpoint | undefined> {
    return this.store.db.selectFrom('checkpoints').selectAll()
      .where('account_id', '=', accountId).orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
  }

  /** Decrypts the payload of one event; null when it has none or the account was shredded. */
  async readPayload(db: Db, accountId: string, seq: number): Promise<JsonValue | null> {
    const row = await db.selectFrom('events').select('payload').where('account_id', '=', accountId).where('seq', '=', seq).executeTakeFirst();
    if (!row?.payload) return null;
    const dataKey = await this.dataKeys.forAccount(db, accountId);
    if (!dataKey) return null;
    const plaintext = openPayload(this.sodium, dataKey, accountId, seq, row.payload);
    return JSON.parse(Buffer.from(plaintext).toString('utf8')) as JsonValue;
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
    return this.store.transact((trx) => this.dataKeys.shred(trx, accountId));
  }

  private async insertCheckpoint(trx: Db, accountId: string, frontier: MerkleFrontier): Promise<Checkpoint> {
    const checkpoint = signCheckpoint(this.signingKey, this.ledgerId, accountId, frontier.size, frontier.root(), rfc3339(this.clock.now()));
    await trx.insertInto('checkpoints').values(checkpoint).onConflict((oc) => oc.columns(['account_id', 'tree_size']).doNothing()).execute();
    return checkpoint;
  }

  /** Locks the chain head (a row lock on PostgreSQL; SQLite's writer lock already serialises), creating it on first use. */
  private async lockChainHead(trx: Db, accountId: string): Promise<ChainHead>;
  private async lockChainHead(trx: Db, accountId: string, options: { create: false }): Promise<ChainHead | undefined>;
  private async lockChainHead(trx: Db, accountId: string, options = { create: true }): Promise<ChainHead | undefined> {
    const select = () => this.store.forUpdate(
      trx.selectFrom('chains').select(['size', 'head_hash', 'frontier', 'checkpoint_size']).where('account_id', '=', accountId),
    ).executeTakeFirst();
    const head = await select();
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
