/**
 * During an outage the same failure happens on every request: one line per kind per window,
 * with how many happened, says as much as a thousand lines with a stack each and keeps the
 * log (and the disk under it) usable. The first occurrence of a kind is written at once; the
 * rest of its window is counted and written as one line when the next occurrence comes after
 * the window, or when `flush()` is called. Times come from a monotonic clock.
 */
export class RateLimitedLog {
  private readonly kinds = new Map<string, { windowStart: number; suppressed: number }>();

  constructor(
    private readonly write: (kind: string, count: number, message: string) => void,
    private readonly windowMs = 5_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Notes one occurrence of `kind`; writes a line when its window allows one. */
  note(kind: string, message: string): void {
    const now = this.now();
    const entry = this.kinds.get(kind);
    if (entry && now - entry.windowStart < this.windowMs) {
      entry.suppressed++;
      return;
    }
    const count = 1 + (entry?.suppressed ?? 0);
    this.kinds.set(kind, { windowStart: now, suppressed: 0 });
    this.write(kind, count, message);
  }

  /** Writes the counts still held back (for a clean stop). */
  flush(): void {
    for (const [kind, entry] of this.kinds) {
      if (entry.suppressed > 0) this.write(kind, entry.suppressed, 'more of the same');
      entry.suppressed = 0;
    }
  }
}
