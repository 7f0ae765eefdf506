/** `10s`, `2500ms`, `1m` style durations for command-line options, in milliseconds (a bare number is seconds). */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/i.exec(text.trim());
  if (!match) throw new Error(`cannot read the duration "${text}": use a number with ms, s or m, like 10s or 2500ms`);
  const unit = (match[2] ?? 's').toLowerCase();
  const ms = Number(match[1]) * (unit === 'ms' ? 1 : unit === 'm' ? 60_000 : 1000);
  if (ms < 1 || ms > 3_600_000) throw new Error(`the duration "${text}" must lie between 1 ms and 1 hour`);
  return Math.round(ms);
}
