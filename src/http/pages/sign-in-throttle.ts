import net from 'node:net';
import type { Clock } from '../../core/time.js';

/**
 * How many failed sign-ins a client gets, and what happens after. Approver keys are pasted,
 * not typed, so five misses in a minute is already more than a person makes; the first lock
 * is one minute, so someone who pasted the wrong key five times waits only briefly. Each
 * lock in a row doubles (1, 2, 4, 8 min, then 15 min at most), so a persistent guesser from
 * one address settles at five guesses per quarter hour (480 a day) against 256-bit keys.
 * An hour without a failure forgets the strikes. 10,000 clients at ~200 bytes each bound
 * the memory at a few MB.
 */
export interface SignInLimits {
  failuresAllowed: number;
  windowMs: number;
  firstLockMs: number;
  longestLockMs: number;
  forgetAfterMs: number;
  maxClients: number;
}

export const SIGN_IN_LIMITS: SignInLimits = {
  failuresAllowed: 5,
  windowMs: 60_000,
  firstLockMs: 60_000,
  longestLockMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxClients: 10_000,
};

export type Admission =
  | { admitted: true; attempt: SignInAttempt }
  | { admitted: false; retryAfterSeconds: number };

/** One admitted sign-in. Call `recordFailure()` when the credential is refused, and `end()` always (in a `finally`). */
export interface SignInAttempt {
  /** Counts a failure; answers how long the client is now locked out when this failure locked it, else null. */
  recordFailure(): { lockedForSeconds: number } | null;
  /** The attempt is over: a success, a failure already recorded, or an error before any verdict (not counted). */
  end(): void;
}

interface ClientRecord {
  /** When each failure inside the current window happened (at most `failuresAllowed`). */
  failures: number[];
  /** Admitted attempts whose verdict is not known yet: they count against the limit, so parallel guesses cannot overrun it. */
  inFlight: number;
  /** Locks served in a row: the back-off exponent. */
  lockouts: number;
  lockedUntil: number;
  lastFailureAt: number;
}

/**
 * Limits failed approver sign-ins per client (see `clientOf`). The check comes before the
 * credential is looked at: a locked-out client is refused even with a correct key, so it
 * cannot go on probing and learn from the answers which key was right. Successes are not
 * counted and never delayed.
 *
 * Per client, not also per account: the form takes nothing but the key, so the identity
 * being tried is the key itself, and a guesser never tries one twice. A count per tried key
 * would never fill; it would only let every guess push a real client's record out of the
 * bounded map below.
 *
 * In memory, per instance: behind a load balancer each of N instances keeps its own
 * count, so the effective limit is N times the one here. That is acceptable because the
 * keys are 256 random bits; the throttle slows guessing and makes it visible in the logs,
 * it is not what makes guessing hopeless.
 *
 * Memory is bounded: a Map kept in least-recently-seen order (every touch re-inserts the
 * record at the end) holds at most `maxClients` records, and the oldest goes first. An
 * attacker cycling more addresses than that can push out records of its own earlier
 * addresses, which only returns to it the rate those addresses already gave it.
 */
export class SignInThrottle {
  private readonly clients = new Map<string, ClientRecord>();

  constructor(private readonly clock: Clock, private readonly limits: SignInLimits = SIGN_IN_LIMITS) {}

  /** How many clients are remembered (for tests and metrics). */
  get size(): number {
    return this.clients.size;
  }

  admit(client: string): Admission {
    const now = this.clock.now();
    const record = this.touch(client, now);
    if (record.lockedUntil > now) return { admitted: false, retryAfterSeconds: Math.ceil((record.lockedUntil - now) / 1000) };
    this.dropExpiredFailures(record, now);
    if (record.failures.length + record.inFlight >= this.limits.failuresAllowed) {
      // Only attempts still in flight can fill the window without a lock: their verdicts come within a second.
      return { admitted: false, retryAfterSeconds: 1 };
    }
    record.inFlight++;
    return { admitted: true, attempt: this.attempt(client, record) };
  }

  private attempt(client: string, record: ClientRecord): SignInAttempt {
    let failed = false;
    let ended = false;
    return {
      recordFailure: () => {
        if (failed || ended) return null;
        failed = true;
        return this.fail(client, record);
      },
      end: () => {
        if (ended) return;
        ended = true;
        record.inFlight--;
        this.dropIfClean(client, record);
      },
    };
  }

  private fail(client: string, record: ClientRecord): { lockedForSeconds: number } | null {
    const now = this.clock.now();
    this.dropExpiredFailures(record, now);
    record.failures.push(now);
    record.lastFailureAt = now;
    this.remember(client, record);
    if (record.failures.length < this.limits.failuresAllowed) return null;
    const lockMs = Math.min(this.limits.firstLockMs * 2 ** record.lockouts, this.limits.longestLockMs);
    record.lockedUntil = now + lockMs;
    record.lockouts++;
    record.failures = [];
    return { lockedForSeconds: Math.ceil(lockMs / 1000) };
  }

  /**
   * The client's record, moved to the most-recently-seen end. A long-quiet record is cleared
   * in place rather than replaced: attempts in flight hold it and must count down on it.
   */
  private touch(client: string, now: number): ClientRecord {
    const record = this.clients.get(client) ?? { failures: [], inFlight: 0, lockouts: 0, lockedUntil: 0, lastFailureAt: 0 };
    if (this.forgettable(record, now)) Object.assign(record, { failures: [], lockouts: 0, lockedUntil: 0 });
    this.remember(client, record);
    return record;
  }

  private dropExpiredFailures(record: ClientRecord, now: number): void {
    record.failures = record.failures.filter((at) => at > now - this.limits.windowMs);
  }

  private remember(client: string, record: ClientRecord): void {
    this.clients.delete(client);
    this.clients.set(client, record);
    while (this.clients.size > this.limits.maxClients) {
      this.clients.delete(this.clients.keys().next().value!);
    }
  }

  private forgettable(record: ClientRecord, now: number): boolean {
    return record.lockedUntil <= now && now - record.lastFailureAt >= this.limits.forgetAfterMs;
  }

  /** A client with nothing against it and nothing in flight takes no memory: successes leave no trace. */
  private dropIfClean(client: string, record: ClientRecord): void {
    const clean = record.inFlight === 0 && record.lockouts === 0 && record.failures.length === 0;
    if (clean && this.clients.get(client) === record) this.clients.delete(client);
  }
}

/**
 * The client a sign-in is counted against: the IPv4 address, or the /64 of an IPv6 address
 * (one subscriber usually holds a whole /64, so per-address IPv6 buckets would be free to
 * cycle). An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, from a dual-stack socket) is its
 * IPv4 address. The address is Koa's `ctx.ip`: the socket's, or with `serve --trusted-proxies N`
 * the one the outermost trusted proxy saw (src/http/app.ts).
 */
export function clientOf(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (net.isIPv4(address)) return address;
  const withoutZone = address.split('%')[0]!;
  if (!net.isIPv6(withoutZone)) return address;
  return `${ipv6Groups(withoutZone).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, expanded from `::` and a dotted IPv4 tail. */
function ipv6Groups(address: string): string[] {
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  let text = address;
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = address.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headGroups = head === '' ? [] : head.split(':');
  if (tail === undefined) return headGroups.map(normalGroup);
  const tailGroups = tail === '' ? [] : tail.split(':');
  const zeros = new Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map(normalGroup);
}

function normalGroup(group: string): string {
  return parseInt(group, 16).toString(16);
}
