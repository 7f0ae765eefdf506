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

/**
 * The timestamp rfc3339 wrote last, and its milliseconds. Events come many to a millisecond under
 * load, and each one's ts is formatted, then parsed again as the next one's lower bound (~1.1 µs
 * and ~0.3 µs on these machines, of a replay's ~60 µs without HTTP): one entry answers both.
 */
let lastMs = Number.NaN;
let lastText = '';

/** RFC 3339 in UTC with milliseconds, the one timestamp format of the ledger. */
export function rfc3339(epochMs: number): string {
  // NaN never equals itself: an invalid time still throws, as toISOString does.
  if (epochMs !== lastMs) {
    lastText = new Date(epochMs).toISOString();
    lastMs = epochMs;
  }
  return lastText;
}

/** The milliseconds of an RFC 3339 timestamp (Date.parse), without parsing the one rfc3339 wrote last. */
export function epochMsOf(timestamp: string): number {
  return timestamp === lastText ? lastMs : Date.parse(timestamp);
}
