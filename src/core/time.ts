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
 * The two timestamps rfc3339 wrote last, and their milliseconds. Events come many to a
 * millisecond under load, and each one's ts is formatted, then parsed again as the next one's
 * lower bound (~1.1 µs and ~0.3 µs on these machines, of a replay's ~60 µs without HTTP); a claim
 * also formats its lease's expiry between two of its own "now"s, hence two entries, not one.
 */
let recentMs = Number.NaN;
let recentText = '';
let olderMs = Number.NaN;
let olderText = '';

/** RFC 3339 in UTC with milliseconds, the one timestamp format of the ledger. */
export function rfc3339(epochMs: number): string {
  // NaN never equals itself: an invalid time still throws, as toISOString does.
  if (epochMs === recentMs) return recentText;
  if (epochMs === olderMs) return olderText;
  const text = new Date(epochMs).toISOString();
  olderMs = recentMs;
  olderText = recentText;
  recentMs = epochMs;
  recentText = text;
  return text;
}

/** The milliseconds of an RFC 3339 timestamp (Date.parse), without parsing one that rfc3339 wrote lately. */
export function epochMsOf(timestamp: string): number {
  if (timestamp === recentText) return recentMs;
  if (timestamp === olderText) return olderMs;
  return Date.parse(timestamp);
}
