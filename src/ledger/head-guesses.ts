import type { Clock } from '../core/time.js';
import type { ChainHead } from './chain-write.js';

/** Accounts whose last written head is remembered; past this the memory starts over (a miss costs one read). */
const MAX_CACHED_HEADS = 10_000;
const GUESS_PAUSE_AFTER_MISS_MS = 1000;

/**
 * The head each account's chain had after this instance's last append: a guess that saves reading
 * the head first, always checked by the write (a compare-and-set, chain-write.ts).
 */
export class HeadGuesses {
  private readonly heads = new Map<string, ChainHead>();
  /** When a guess last missed, per account. */
  private readonly missedAt = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /**
   * The head to build on, if any. No guessing for a while after a miss: when other instances
   * append to the same account most guesses miss, and a miss costs one round trip more than
   * locking and reading the head at once. Unless the caller's transaction wrote the head itself
   * (`holdsHead`): it holds the row lock, so what it wrote is still the head (a batch of one
   * account's units, postgres-group-commit.ts).
   */
  guess(accountId: string, holdsHead: boolean): ChainHead | undefined {
    if (!holdsHead) {
      const missedAt = this.missedAt.get(accountId);
      if (missedAt !== undefined && this.clock.now() - missedAt < GUESS_PAUSE_AFTER_MISS_MS) return undefined;
    }
    return this.heads.get(accountId);
  }

  missed(accountId: string): void {
    this.missedAt.set(accountId, this.clock.now());
  }

  /** Remembered before the write returns, so the next append to the account already builds on it. */
  remember(accountId: string, head: ChainHead): void {
    if (this.heads.size >= MAX_CACHED_HEADS) {
      this.heads.clear();
      this.missedAt.clear();
    }
    this.heads.set(accountId, head);
  }

  /**
   * A write of `written` did not happen. With `previous` (the head was never compared) the guess
   * goes back to it; without, it is forgotten: appends that meanwhile built on `written` will miss
   * as well, and later ones read the real head.
   */
  unwritten(accountId: string, written: ChainHead, previous: ChainHead | null): void {
    if (this.heads.get(accountId) !== written) return;
    if (previous) this.heads.set(accountId, previous);
    else this.heads.delete(accountId);
  }
}
