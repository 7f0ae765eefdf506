import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import { isDeepStrictEqual } from 'node:util';
import { InvariantError } from '../core/errors.js';
import type { Db } from './store.js';

/**
 * Runs a statement's SQL text at once, with no trip through Kysely's executor: SQLite's connection
 * inside a batch, where the store holds the connection and a statement is a synchronous call.
 */
export type DirectRunner = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>;

const directRunners = new WeakMap<Db, DirectRunner>();

/**
 * `db` (a connection the caller holds for its whole life) runs compiled statements with `runner`.
 * Kysely's executor, its connection provider and driver cost a few microseconds and several
 * promises per statement, more than SQLite takes to run a claim's small statements.
 */
export function runDirectly(db: Db, runner: DirectRunner): void {
  directRunners.set(db, runner);
}

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
  // By dialect adapter (its SQL differs: $1 against ?, quoting), then by shape.
  const texts = new WeakMap<object, Map<string, string>>();
  return (db, args) => {
    const adapter = db.getExecutor().adapter;
    let byShape = texts.get(adapter);
    if (!byShape) texts.set(adapter, (byShape = new Map()));
    const key = shape(args);
    const text = byShape.get(key);
    if (text !== undefined) {
      const direct = directRunners.get(db);
      return direct ? runNow(direct, text, parameters(args)) : db.executeQuery(CompiledQuery.raw(text, parameters(args) as unknown[]));
    }
    const compiled = build(db, args).compile();
    if (!isDeepStrictEqual([...compiled.parameters], [...parameters(args)])) {
      throw new InvariantError(`compiledOnce: the parameters named for "${compiled.sql}" are not the ones the query binds`);
    }
    byShape.set(key, compiled.sql);
    return db.executeQuery(compiled);
  };
}

/** A statement SQLite refuses rejects the promise, as through Kysely: it never throws at the call. */
function runNow(direct: DirectRunner, text: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
  try {
    return Promise.resolve(direct(text, parameters));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The first row a compiled SELECT returned, if any (`executeTakeFirst`). */
export function firstRow<Row>(result: QueryResult<unknown>): Row | undefined {
  return result.rows[0] as Row | undefined;
}

/** Rows an INSERT, UPDATE or DELETE touched, as the driver reports them. */
export function affectedRows(result: QueryResult<unknown>): number {
  return Number(result.numAffectedRows ?? 0n);
}
