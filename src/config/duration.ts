// Durations as operators write them on the command line (serve --request-deadline, proxy --timeout
// and --lease): `10s`, `2500ms`, `1m`; a bare number is seconds.

/** Milliseconds, refused outside `[min, max]` ms (by default 1 ms to 1 hour). */
export function parseDuration(text: string, bounds: { min?: number; max?: number } = {}): number {
  const { min = 1, max = 3_600_000 } = bounds;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/i.exec(text.trim());
  if (!match) throw new Error(`cannot read the duration "${text}": use a number with ms, s or m, like 10s or 2500ms`);
  const unit = (match[2] ?? 's').toLowerCase();
  const ms = Number(match[1]) * (unit === 'ms' ? 1 : unit === 'm' ? 60_000 : 1000);
  if (ms < min || ms > max) throw new Error(`the duration "${text}" must lie between ${min} ms and ${max === Infinity ? 'any length' : `${max} ms`}`);
  return Math.round(ms);
}
