import type { Db } from '../store/store.js';

/** Longest an append waits for the one before it (see ChainTurns). */
const TURN_WAIT_MS = 200;

/**
 * PostgreSQL: the order in which this instance's concurrent appends to one account write the
 * account's chain head.
 *
 * An append writes on the head this instance wrote last (a guess, Ledger.appendRun) with a
 * compare-and-set that locks the head row and then compares (chain-write.ts). Concurrent appends
 * otherwise reach the database in any order: one that builds on the head another transaction is
 * about to write, but gets there first, finds the old head, misses, and must lock and read the
 * head (two more round trips, and a pause of the guesses). Taking turns, each append sends its
 * compare-and-set once the previous one's has reached the row (and holds its lock until it
 * commits), so it waits on that lock and then finds the head it built on.
 *
 * The wait is bounded because PostgreSQL's deadlock detector cannot see it: past TURN_WAIT_MS an
 * append goes ahead, and any wait it then has is one the database sees. A transaction that
 * holds the account's head lock — it wrote the head, or locked it first (an account's batch:
 * Ledger.holdChainHead) — never waits for a turn (the appends behind it wait for its commit:
 * waiting for them would be a cycle).
 */
export class ChainTurns {
  /** Per account, the turn of the newest append. */
  private readonly newest = new Map<string, Promise<void>>();
  /** The accounts whose head each open transaction has written. */
  private readonly holding = new WeakMap<Db, Set<string>>();
  /** The accounts whose head lock each open transaction holds (written, or locked first). */
  private readonly locking = new WeakMap<Db, Set<string>>();

  /** Waits for this append's turn on the account; `end` once its head write has returned or failed. */
  async take(trx: Db, accountId: string): Promise<{ end(): void }> {
    if (this.locking.get(trx)?.has(accountId)) return { end: () => undefined };
    const previous = this.newest.get(accountId);
    let end!: () => void;
    const mine = new Promise<void>((resolve) => (end = resolve));
    this.newest.set(accountId, mine);
    if (previous) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([previous, new Promise<void>((resolve) => (timer = setTimeout(resolve, TURN_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return {
      end: () => {
        end();
        if (this.newest.get(accountId) === mine) this.newest.delete(accountId);
      },
    };
  }

  /** True once the transaction wrote the account's head (so no one else can have moved it since). */
  holds(trx: Db, accountId: string): boolean {
    return this.holding.get(trx)?.has(accountId) ?? false;
  }

  /** The transaction wrote the account's head: it holds the row until it ends. */
  wrote(trx: Db, accountId: string): void {
    addTo(this.holding, trx, accountId);
    this.locked(trx, accountId);
  }

  /** The transaction holds the account's head lock until it ends, whether or not it wrote the head. */
  locked(trx: Db, accountId: string): void {
    addTo(this.locking, trx, accountId);
  }
}

function addTo(map: WeakMap<Db, Set<string>>, trx: Db, accountId: string): void {
  let accounts = map.get(trx);
  if (!accounts) map.set(trx, (accounts = new Set()));
  accounts.add(accountId);
}
