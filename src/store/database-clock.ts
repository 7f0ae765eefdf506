import { sql } from 'kysely';
import type { Clock } from '../core/time.js';
import type { Store } from './store.js';

/** How often the offset to the database's clock is measured again. */
const RESYNC_MS = 2_000;
/** A sample whose round trip took longer than this says little about the offset: kept out. */
const MAX_USEFUL_ROUND_TRIP_MS = 250;

/**
 * The database's clock, read locally. Several instances on one PostgreSQL must agree on when a
 * lease, an approval or a grant runs out, whatever their hosts' clocks say: each decision is
 * judged on the database server's clock. Asking the server on every decision would add a round
 * trip to every unit of work, so the offset between the server's clock and this process's
 * monotonic clock is measured at start and every 2 s (the sample's round trip halved is its
 * error, a millisecond on a LAN), and `now()` is the monotonic clock plus that offset.
 *
 * Built on the monotonic clock, a step of this host's wall clock (forward or back, by NTP or a
 * person) changes nothing here at all; a step of the database host's clock is followed within
 * 2 s. Between samples two instances agree to within their round trips plus the drift of their
 * monotonic clocks over 2 s (parts per million). The ledger keeps each chain's `ts` from
 * running backwards across a resync (src/ledger/ledger.ts).
 */
export class DatabaseClock implements Clock {
  private offsetMs = 0;
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly store: Store) {}

  /** Measures once (so the first decision is already on the database's clock), then keeps measuring. */
  static async start(store: Store): Promise<DatabaseClock> {
    const clock = new DatabaseClock(store);
    if (!(await clock.sample())) throw new Error('could not read the database clock');
    clock.timer = setInterval(() => void clock.sample(), RESYNC_MS);
    clock.timer.unref();
    return clock;
  }

  now(): number {
    return Math.floor(performance.now() + this.offsetMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One measurement; a failed or slow one keeps the last offset (the store is down or busy anyway). */
  private async sample(): Promise<boolean> {
    try {
      const before = performance.now();
      const { rows } = await sql<{ ms: number | string }>`select extract(epoch from clock_timestamp()) * 1000 as ms`.execute(this.store.db);
      const after = performance.now();
      if (after - before > MAX_USEFUL_ROUND_TRIP_MS && this.timer !== undefined) return false;
      this.offsetMs = Number(rows[0]!.ms) - (before + after) / 2;
      return true;
    } catch {
      return false;
    }
  }
}
