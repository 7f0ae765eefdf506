/**
 * Query parameters are untrusted input like bodies: each is read once, checked, then typed.
 * These work on a plain record (Koa's `ctx.query`), so the API and the review console's pages
 * parse one query the same way; every refusal is `invalid_request` naming the parameter.
 */
import { paramError } from '../core/query-param-error.js';
import { rfc3339 } from '../core/time.js';
import { hasNul, NUL_PROBLEM } from '../core/stored-text.js';
import { ACCOUNT_ID_RULE, isAccountId } from '../principals/accounts.js';

export type RawParams = Record<string, string | string[] | undefined>;

export { paramError };

/** A parameter given at most once, 1-1024 characters; undefined when absent. */
export function singleParam(raw: RawParams, name: string): string | undefined {
  const value = raw[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 1024) throw paramError(name, 'must be given once, 1-1024 characters');
  if (hasNul(value)) throw paramError(name, NUL_PROBLEM);
  return value;
}

/** A parameter the route cannot do without: its value, or a refusal naming it when absent. */
export function required<T>(name: string, value: T | undefined): T {
  if (value === undefined) throw paramError(name, 'is required');
  return value;
}

/** An account id (principals/accounts.ts); undefined when absent. */
export function accountIdParam(raw: RawParams, name = 'account_id'): string | undefined {
  const value = singleParam(raw, name);
  if (value !== undefined && !isAccountId(value)) throw paramError(name, ACCOUNT_ID_RULE);
  return value;
}

/** A whole number within [min, max]; `fallback` when absent. */
export function integerParam(raw: RawParams, name: string, range: { fallback: number; min: number; max: number }): number {
  const value = singleParam(raw, name);
  if (value === undefined) return range.fallback;
  const n = /^\d{1,16}$/.test(value) ? Number(value) : NaN;
  if (!(n >= range.min && n <= range.max)) throw paramError(name, `must be an integer from ${range.min} to ${range.max}`);
  return n;
}

/**
 * Refuses a parameter the route does not take: a misspelt one (`afer_seq`) would otherwise be
 * ignored, and a page read from the start again looks like an answer.
 */
export function onlyParams(raw: RawParams, names: readonly string[], of = 'this route'): void {
  for (const name of Object.keys(raw)) {
    if (!names.includes(name)) throw paramError(name, `is not a parameter of ${of}${names.length > 0 ? ` (${names.join(', ')})` : ', which takes none'}`);
  }
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 time, returned the way `created_at` is stored (UTC, milliseconds), so the
 * database compares text with text. A time with sub-millisecond digits is rounded up: for an
 * inclusive `since` and an exclusive `until` alike, `created_at >= t` then means what it says.
 */
export function timeParam(raw: RawParams, name: string): string | undefined {
  const value = singleParam(raw, name);
  if (value === undefined) return undefined;
  const match = RFC3339.exec(value);
  const ms = match ? Date.parse(value.toUpperCase()) : NaN;
  if (!match || Number.isNaN(ms) || !sameCalendarDay(match, ms)) {
    throw paramError(name, 'must be an RFC 3339 time such as 2025-03-01T09:30:00Z');
  }
  const extra = (match[7] ?? '').slice(4);
  return rfc3339(ms + (/[1-9]/.test(extra) ? 1 : 0));
}

/** Date.parse rolls 2025-02-30 over to March: a date that does not exist is refused instead. */
function sameCalendarDay(match: RegExpExecArray, ms: number): boolean {
  const offset = match[8]!.toUpperCase() === 'Z' ? 0 : (match[8]!.startsWith('-') ? -1 : 1) * (Number(match[8]!.slice(1, 3)) * 60 + Number(match[8]!.slice(4, 6)));
  const local = new Date(ms + offset * 60_000);
  return local.getUTCFullYear() === Number(match[1]) && local.getUTCMonth() + 1 === Number(match[2]) && local.getUTCDate() === Number(match[3]);
}
