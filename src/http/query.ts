import type { Context } from 'koa';
import { accountIdParam as rawAccountIdParam, integerParam as rawIntegerParam, paramError, required, singleParam } from '../operations/query-params.js';

// Query parameters are untrusted input like bodies: each read once, checked, then typed. The
// reading itself is operations/query-params.ts's, shared with search and the review pages;
// these read it from a request. Parameters a route does not take never reach it: they are
// refused before it runs, from what its module declares (declared-queries.ts).

/** A parameter given at most once, 1–1024 characters; undefined when absent. */
export function stringParam(ctx: Context, name: string): string | undefined {
  return singleParam(ctx.query, name);
}

/** A whole number within [min, max]; `fallback` when absent. */
export function integerParam(ctx: Context, name: string, range: { fallback: number; min: number; max: number }): number {
  return rawIntegerParam(ctx.query, name, range);
}

/** A whole number within [min, max] that must be given. */
export function requiredIntegerParam(ctx: Context, name: string, range: { min: number; max: number }): number {
  if (ctx.query[name] === undefined) throw paramError(name, 'is required');
  return integerParam(ctx, name, { fallback: range.min, ...range });
}

/** `account_id` (or `name`), an account id; undefined when absent. */
export function accountIdParam(ctx: Context, name = 'account_id'): string | undefined {
  return rawAccountIdParam(ctx.query, name);
}

/** `account_id`, an account id that must be given. */
export function requiredAccountIdParam(ctx: Context): string {
  return required('account_id', accountIdParam(ctx));
}

/** One of `values`; undefined when absent. */
export function enumParam<T extends string>(ctx: Context, name: string, values: readonly T[]): T | undefined {
  const raw = stringParam(ctx, name);
  if (raw !== undefined && !(values as readonly string[]).includes(raw)) throw paramError(name, `must be one of ${values.join(', ')}`);
  return raw as T | undefined;
}

/**
 * Where a page starts: after `cursor` (the previous page's next_cursor, as every list takes it)
 * or, the same position by its own name, after `alias` (`after_seq`, `after_size`); 0 for neither.
 * Both naming different positions is refused: whichever were read, the other would be ignored.
 */
export function positionParam(ctx: Context, alias: string): number {
  const any = { fallback: 0, min: 0, max: Number.MAX_SAFE_INTEGER };
  const cursor = ctx.query.cursor === undefined ? undefined : integerParam(ctx, 'cursor', any);
  const aliased = ctx.query[alias] === undefined ? undefined : integerParam(ctx, alias, any);
  if (cursor !== undefined && aliased !== undefined && cursor !== aliased) throw paramError('cursor', `and ${alias} name different positions: give one of them`);
  return cursor ?? aliased ?? 0;
}
