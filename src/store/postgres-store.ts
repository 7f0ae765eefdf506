import pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../schema/database.js';
import type { Db, Store } from './store.js';

// int8 columns (seq, epoch ms) come back as numbers; every value we store in them is below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`int8 value ${text} exceeds 2^53`);
  return value;
});

const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 8;
/** No unit waits on anything outside the database mid-transaction, so an idle transaction is a dead client. */
export const IDLE_IN_TRANSACTION_MS = 30_000;

/** PostgreSQL for several stateless instances: serialization failures and deadlocks are retried here, never surfaced. */
export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly db: Db;

  constructor(connectionString: string, options: { poolSize?: number; onIdleError?: (error: Error) => void } = {}) {
    // Ten connections per instance: appends to one account queue on its chain-head row anyway, so
    // more connections buy little; several instances × 10 stay well inside max_connections (100).
    const pool = new pg.Pool({
      connectionString,
      max: options.poolSize ?? 10,
      // An instance whose host vanishes (no FIN, no RST) would otherwise hold its account's
      // chain-head row lock until TCP gives up, hours later: the server ends such a transaction.
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      keepAlive: true,
    });
    // An idle client that loses its server (restart, failover) emits 'error' on the pool; unhandled,
    // that would kill the process. The pool drops the client and the next query connects afresh.
    pool.on('error', options.onIdleError ?? ((error) => process.stderr.write(`gatehouse: idle PostgreSQL connection lost: ${error.message}\n`)));
    this.db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
  }

  async transact<T>(run: (trx: Db) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute(run);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (!code || !RETRYABLE.has(code) || attempt >= MAX_ATTEMPTS) throw error;
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
      }
    }
  }

  forUpdate<QB extends SelectQueryBuilder<any, any, any>>(query: QB): QB {
    return query.forUpdate() as QB;
  }


  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/** Statement texts prepared per connection; `in (…)` lists of varying length make new texts, so the set is bounded. */
const MAX_PREPARED_TEXTS = 200;

/**
 * Runs each parameterised query as a named prepared statement, so PostgreSQL parses and plans
 * it once per connection rather than on every call (Kysely sends the text each time). The
 * chain-head write is one statement (an update and an insert); planning it every time was over a third
 * of PostgreSQL's CPU per claim (BENCHMARKS.md).
 */
function preparingPool(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  const nameFor = (text: string): string | undefined => {
    const known = names.get(text);
    if (known !== undefined || names.size >= MAX_PREPARED_TEXTS) return known;
    const name = `gatehouse_${names.size}`;
    names.set(text, name);
    return name;
  };
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      const query = (text: string, values?: readonly unknown[]) =>
        values && values.length > 0 ? client.query({ name: nameFor(text), text, values: [...values] }) : client.query(text, values ? [...values] : []);
      // Kysely's overloads also take a cursor (only with its `cursor` option, unused here), and it
      // types `command` as the commands it reads where pg says string: the shapes agree at run time.
      return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release() };
    },
    end: () => pool.end(),
  };
}
