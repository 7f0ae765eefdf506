import type { Db } from '../store/store.js';
import type { Clock } from '../core/time.js';
import { monotonicClock, rfc3339 } from '../core/time.js';
import { generateKey, unwrapDataKey, wrapDataKey } from '../core/seal.js';
import type { Sodium } from '../core/sodium.js';

/** Another instance's shredding reaches this one's cache within this long. */
const CACHE_TTL_MS = 4000;

/**
 * Per-account data keys, wrapped by the master key at rest. An account row is
 * made on first use; shredding sets its wrapped key to null, and from then on
 * its payloads stay unreadable (and new events carry none).
 */
export class DataKeys {
  private readonly cache = new Map<string, { key: Uint8Array | null; until: number }>();
  /**
   * Accounts whose row a transaction wrote (made or shredded), by transaction. What such a
   * transaction reads of that row is not committed yet and may be rolled back (its unit fails, or
   * another unit breaks its batch), so it is not cached: a cached key whose row was rolled back
   * would seal payloads that no stored key opens. A later transaction reads the row committed.
   */
  private readonly writtenIn = new WeakMap<Db, Set<string>>();

  /** `cacheClock` is monotonic: a stepped wall clock must not stretch how long a shredded key stays cached. */
  constructor(private readonly sodium: Sodium, private readonly masterKey: Uint8Array, private readonly clock: Clock, private readonly cacheClock: Clock = monotonicClock) {}

  /** The account's data key, creating the account on first use; null once shredded. */
  async forAccount(trx: Db, accountId: string): Promise<Uint8Array | null> {
    const cached = this.held(accountId);
    if (cached !== undefined) return cached;
    let row = await trx.selectFrom('accounts').select(['wrapped_data_key', 'shredded_at']).where('id', '=', accountId).executeTakeFirst();
    if (!row) {
      const wrapped = wrapDataKey(this.sodium, this.masterKey, accountId, generateKey(this.sodium));
      const made = await trx.insertInto('accounts')
        .values({ id: accountId, wrapped_data_key: Buffer.from(wrapped), shredded_at: null, created_at: rfc3339(this.clock.now()) })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      // Not made here: another instance's transaction made it and committed (ours waited for it).
      if (Number(made.numInsertedOrUpdatedRows ?? 0n) > 0) this.wrote(trx, accountId);
      row = await trx.selectFrom('accounts').select(['wrapped_data_key', 'shredded_at']).where('id', '=', accountId).executeTakeFirstOrThrow();
    }
    const key = row.wrapped_data_key ? unwrapDataKey(this.sodium, this.masterKey, accountId, row.wrapped_data_key) : null;
    if (!this.writtenIn.get(trx)?.has(accountId)) this.cache.set(accountId, { key, until: this.cacheClock.now() + CACHE_TTL_MS });
    return key;
  }

  /** Destroys the account's data key: its chain still verifies, its payloads never decrypt again. */
  async shred(trx: Db, accountId: string): Promise<boolean> {
    const result = await trx.updateTable('accounts')
      .set({ wrapped_data_key: null, shredded_at: rfc3339(this.clock.now()) })
      .where('id', '=', accountId).where('shredded_at', 'is', null)
      .executeTakeFirst();
    this.cache.delete(accountId);
    this.wrote(trx, accountId);
    return Number(result.numUpdatedRows) > 0;
  }

  private wrote(trx: Db, accountId: string): void {
    const accounts = this.writtenIn.get(trx);
    if (accounts) accounts.add(accountId);
    else this.writtenIn.set(trx, new Set([accountId]));
  }

  /**
   * The account's data key (null: shredded) when this instance holds it fresh, else undefined and
   * forAccount must read it. For the hot paths: an await of a key already held still costs them a
   * promise and a turn of the microtask queue.
   */
  held(accountId: string): Uint8Array | null | undefined {
    const entry = this.cache.get(accountId);
    return entry && entry.until > this.cacheClock.now() ? entry.key : undefined;
  }
}
