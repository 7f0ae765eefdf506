import pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../schema/database.js';
import { StoreUnavailableError, type ArrivalSignal, type CommitObserver, type Db, type Store, type TransactOptions, type UnitOfWork } from './store.js';
import { int8AsNumber } from './pg-int8.js';
import { RateLimitedLog } from '../core/rate-limited-log.js';
import { AccountGroupCommit } from './postgres-group-commit.js';

/** How long a request waits for a connection, and for one statement, before the store counts as unreachable. */
export const CONNECT_TIMEOUT_MS = 5_000;
export const STATEMENT_TIMEOUT_MS = 5_000;
/**
 * No unit waits on anything outside the database mid-transaction, so an idle transaction is a
 * dead client (or one cut off from the server). It holds its account's chain-head row lock
 * meanwhile: every other instance's writes to that account wait on it, and past the 5-s
 * statement timeout answer store_unavailable, as the lease sweeper's pass does. At 30 s a
 * partitioned instance stopped its accounts everywhere for 30 s (a black-box drill). 3 s frees
 * the lock before those 5 s run out. Between two statements of a transaction a live instance
 * runs only the next unit's JavaScript (a whole request under load takes ~0.1–0.4 s:
 * BENCHMARKS.md), so it is never idle that long but for a stall of its host; if it were, the
 * store retries a transaction whose connection was ended before COMMIT.
 */
export const IDLE_IN_TRANSACTION_MS = 3_000;

/** PostgreSQL for several stateless instances: serialization failures and deadlocks are retried here, never surfaced. */
export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly db: Db;
  onCommit: CommitObserver | null = null;
  /** Never asked: a commit here waits on the network, and the event loop goes on turning meanwhile. */
  arrivals: ArrivalSignal | null = null;
  beforeAccountBatch: Store['beforeAccountBatch'] = null;
  private readonly groupCommit: AccountGroupCommit;

  constructor(connectionString: string, options: { poolSize?: number; onIdleError?: (error: Error) => void } = {}) {
    // Ten connections per instance: appends to one account queue on its chain-head row anyway, so
    // more connections buy little; several instances × 10 stay well inside max_connections (100).
    const pool = new pg.Pool({
      connectionString,
      // int8 columns (seq, epoch ms) come back as numbers, for this pool only.
      types: int8AsNumber,
      max: options.poolSize ?? 10,
      // An instance whose host vanishes (no FIN, no RST) would otherwise hold its account's
      // chain-head row lock until TCP gives up, hours later: the server ends such a transaction.
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      // A partition must not hang a request: no connection in 5 s, or no answer to a statement in
      // 5 s (server side, and client side for a server that cannot even say so), is an outage.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      query_timeout: STATEMENT_TIMEOUT_MS + 1_000,
      keepAlive: true,
      // Operators (and the lost-connection tests) can tell the service's sessions apart.
      application_name: 'gatehouse',
    });
    // An idle client that loses its server (restart, failover) emits 'error' on the pool; unhandled,
    // that would kill the process. The pool drops the client and the next query connects afresh.
    // Rate-limited: a restart ends every idle connection at once.
    const idleLost = new RateLimitedLog((_kind, count, message) => process.stderr.write(`gatehouse: idle PostgreSQL connection lost (${count} since the last line): ${message}\n`));
    pool.on('error', options.onIdleError ?? ((error) => idleLost.note('idle_connection_lost', error.message)));
    this.db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
    this.groupCommit = new AccountGroupCommit(this.db, () => this.onCommit, () => this.beforeAccountBatch);
  }

  /**
   * A unit in a transaction: shared with other units of its account when it names one, else its
   * own (a batch of one), both through postgres-group-commit.ts. Serialization failures and
   * deadlocks are retried. A connection lost before COMMIT was sent is retried too (the server
   * rolled the transaction back); one lost during COMMIT may or may not have committed, so it is
   * never retried: it surfaces as store_unavailable.
   */
  async transact<T>(run: (trx: Db, work: UnitOfWork) => Promise<T>, options: TransactOptions = {}): Promise<T> {
    const scope = options.scope;
    scope?.unitQueued();
    try {
      return (await this.groupCommit.run(options.account ?? Symbol('own transaction'), run, scope)) as T;
    } finally {
      scope?.unitSettled();
    }
  }

  forUpdate<QB extends SelectQueryBuilder<any, any, any>>(query: QB, options: { skipLocked?: boolean } = {}): QB {
    const locked = query.forUpdate();
    return (options.skipLocked ? locked.skipLocked() : locked) as QB;
  }


  async close(): Promise<void> {
    while (this.groupCommit.busy) await new Promise((r) => setTimeout(r, 5));
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
  // pg-pool removes its own 'error' listener while a client is checked out, so a server that ends
  // the session while the client sits between two statements would emit an unhandled 'error' and
  // end the process. The listener goes on in 'acquire', synchronously: the FATAL message can come
  // in the same TCP read as the ReadyForQuery that completed the checkout, before any await
  // resumes. The failure reaches the unit through its next statement; the client is destroyed on release.
  const checkedOut = new WeakMap<pg.PoolClient, { lost?: Error; onError: (error: Error) => void }>();
  pool.on('acquire', (client) => {
    const watch: { lost?: Error; onError: (error: Error) => void } = { onError: (error) => (watch.lost = error) };
    client.on('error', watch.onError);
    checkedOut.set(client, watch);
  });
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
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw new StoreUnavailableError(error);
      }
      const watch = checkedOut.get(client)!;
      const query = (text: string, values?: readonly unknown[]) =>
        values && values.length > 0 ? client.query({ name: nameFor(text), text, values: [...values] }) : client.query(text, values ? [...values] : []);
      // Kysely's overloads also take a cursor (only with its `cursor` option, unused here), and it
      // types `command` as the commands it reads where pg says string: the shapes agree at run time.
      const release = () => {
        checkedOut.delete(client);
        client.removeListener('error', watch.onError);
        client.release(watch.lost);
      };
      return { query: query as unknown as PostgresPoolClient['query'], release };
    },
    end: () => pool.end(),
  };
}
