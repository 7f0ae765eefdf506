export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** RFC 3339 in UTC with milliseconds, the one timestamp format of the ledger. */
export function rfc3339(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
