import type { Context } from 'koa';
import { DomainError } from '../core/errors.js';

// Query parameters are untrusted input like bodies: each read once, checked, then typed.

/** A parameter given at most once, 1–1024 characters; undefined when absent. */
export function stringParam(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 1024) {
    throw new DomainError('invalid_request', `the query parameter "${name}" must be given once, 1-1024 characters`);
  }
  return raw;
}

/** A whole number within [min, max]; `fallback` when absent. */
export function integerParam(ctx: Context, name: string, range: { fallback: number; min: number; max: number }): number {
  const raw = stringParam(ctx, name);
  if (raw === undefined) return range.fallback;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= range.min && value <= range.max)) {
    throw new DomainError('invalid_request', `the query parameter "${name}" must be an integer from ${range.min} to ${range.max}`);
  }
  return value;
}

/** One of `values`; undefined when absent. */
export function enumParam<T extends string>(ctx: Context, name: string, values: readonly T[]): T | undefined {
  const raw = stringParam(ctx, name);
  if (raw !== undefined && !(values as readonly string[]).includes(raw)) {
    throw new DomainError('invalid_request', `the query parameter "${name}" must be one of ${values.join(', ')}`);
  }
  return raw as T | undefined;
}
