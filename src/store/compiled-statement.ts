import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import { isDeepStrictEqual } from 'node:util';
import { InvariantError } from '../core/errors.js';
import type { Db } from './store.js';

/**
 * A hot statement that Kysely builds and compiles once per dialect and shape; later calls bind new
 * parameters to the SQL text it made. On the claim path, building the AST and compiling it cost
 * more than SQLite running the statement (BENCHMARKS.md). Kysely still writes every statement:
 * `build` is an ordinary query, and `parameters` names, in order, the values that query binds.
 * The first call of each shape checks the two agree, so a `parameters` that drifts from `build`
 * fails on its first use, in the tests, not silently.
 */
export function compiledOnce<Args>(
  build: (db: Db, args: Args) => Compilable,
  parameters: (args: Args) => readonly unknown[],
  shape: (args: Args) => string = () => '',
): (db: Db, args: Args) => Promise<QueryResult<unknown>> {
  const texts = new Map<string, string>();
  return (db, args) => {
    // The adapter's class tells the dialects apart; its SQL differs ($1 against ?, quoting).
    const key = `${db.getExecutor().adapter.constructor.name}\0${shape(args)}`;
    const text = texts.get(key);
    if (text !== undefined) return db.executeQuery(CompiledQuery.raw(text, parameters(args) as unknown[]));
    const compiled = build(db, args).compile();
    if (!isDeepStrictEqual([...compiled.parameters], [...parameters(args)])) {
      throw new InvariantError(`compiledOnce: the parameters named for "${compiled.sql}" are not the ones the query binds`);
    }
    texts.set(key, compiled.sql);
    return db.executeQuery(compiled);
  };
}

/** The first row a compiled SELECT returned, if any (`executeTakeFirst`). */
export function firstRow<Row>(result: QueryResult<unknown>): Row | undefined {
  return result.rows[0] as Row | undefined;
}

/** Rows an INSERT, UPDATE or DELETE touched, as the driver reports them. */
export function affectedRows(result: QueryResult<unknown>): number {
  return Number(result.numAffectedRows ?? 0n);
}
