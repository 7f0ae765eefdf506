export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Milliseconds on a clock that only moves forward at a steady rate, whatever is done to the wall
 * clock: for in-process caches and throttles, which measure how long ago, never what time it is.
 * (A cache entry timed on the wall clock lives for the size of a backward step.)
 */
export const monotonicClock: Clock = { now: () => performance.now() };

/** A clock `offsetMs` ahead of `base` (a test-only skew, set through config). */
export function offsetClock(base: Clock, offsetMs: number): Clock {
  return offsetMs === 0 ? base : { now: () => base.now() + offsetMs };
}

/** RFC 3339 in UTC with milliseconds, the one timestamp format of the ledger. */
export function rfc3339(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
