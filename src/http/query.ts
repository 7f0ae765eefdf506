import type { Context } from 'koa';
import { paramError, singleParam } from '../operations/query-params.js';

// Query parameters are untrusted input like bodies: each read once, checked, then typed. The
// reading itself is operations/query-params.ts's, shared with search and the review pages.

/** A parameter given at most once, 1–1024 characters; undefined when absent. */
export function stringParam(ctx: Context, name: string): string | undefined {
  return singleParam(ctx.query, name);
}

/** A whole number within [min, max]; `fallback` when absent. */
export function integerParam(ctx: Context, name: string, range: { fallback: number; min: number; max: number }): number {
  const raw = stringParam(ctx, name);
  if (raw === undefined) return range.fallback;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= range.min && value <= range.max)) throw paramError(name, `must be an integer from ${range.min} to ${range.max}`);
  return value;
}

/** One of `values`; undefined when absent. */
export function enumParam<T extends string>(ctx: Context, name: string, values: readonly T[]): T | undefined {
  const raw = stringParam(ctx, name);
  if (raw !== undefined && !(values as readonly string[]).includes(raw)) throw paramError(name, `must be one of ${values.join(', ')}`);
  return raw as T | undefined;
}

/**
 * Refuses a parameter the route does not take: a misspelt one (`afer_seq`) would otherwise be
 * ignored, and a page read from the start again looks like an answer. As GET /v1/operations.
 */
export function onlyParams(ctx: Context, names: readonly string[]): void {
  for (const name of Object.keys(ctx.query)) {
    if (!names.includes(name)) throw paramError(name, `is not a parameter of this route (${names.join(', ')})`);
  }
}
