import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { pino } from 'pino';
import type { Config } from './config/config.js';
import { KeyFileError, loadKeyMaterial } from './config/key-files.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';
import { monotonicClock, offsetClock, systemClock, type Clock } from './core/time.js';
import { DatabaseClock } from './store/database-clock.js';
import { loadSodium } from './core/sodium.js';
import { publicKeyInfo, signingKeyFromSeed, type SigningKey } from './core/signing-key.js';
import { DataKeys } from './ledger/data-keys.js';
import { Ledger } from './ledger/ledger.js';
import { Principals } from './principals/principals.js';
import { Policies } from './policies/policies.js';
import { Operations } from './operations/operations.js';
import { operationPort } from './operations/approval-port.js';
import { Approvals } from './approvals/approvals.js';
import { Metrics } from './metrics/metrics.js';
import { logKeyName } from './core/log-keys.js';
import { masterKeyCheck } from './core/master-key-check.js';

/** Everything a request handler or CLI verb needs, built once from the config. */
export interface AppContext {
  config: Config;
  store: Store;
  clock: Clock;
  /**
   * For in-process caches and throttles, which measure how long ago, never what time it is:
   * monotonic in service (a stepped wall clock cannot stretch them); a test's own clock when it injects one.
   */
  monotonic: Clock;
  logger: Logger;
  ledgerId: string;
  signingKey: SigningKey;
  ledger: Ledger;
  principals: Principals;
  /** Route policies from `--config`, loaded once. */
  policies: Policies;
  /** The approval gate the claim calls, decisions, the approver UI's sessions and the webhook. */
  approvals: Approvals;
  /** Claims, leases, reports, resolution, reads and the lease sweeper. */
  operations: Operations;
  /** Prometheus counters and the sources read at scrape time (`GET /metrics`). */
  metrics: Metrics;
  /** `GET /v1/keys`: the public half of every signing key, for grants and checkpoints. */
  publicKeys(): unknown[];
  close(): Promise<void>;
}

export interface ContextOptions {
  clock?: Clock;
  logger?: Logger;
  /** Already loaded from `config.policiesFile` (serve checks the file before it initialises a data dir). */
  policies?: Policies;
}

export async function openContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const keys = loadKeyMaterial(config);
  // Before the store opens: a bad policies file stops start-up having touched nothing.
  const policies = options.policies ?? (config.policiesFile ? Policies.fromFile(config.policiesFile) : Policies.none());
  const sodium = await loadSodium();
  const monotonic = options.clock ?? monotonicClock;
  const store = await openStore(config.store);
  let databaseClock: DatabaseClock | undefined;
  try {
    // One clock for every decision: on PostgreSQL (several instances) the database's, so hosts
    // whose clocks disagree still agree on when a lease or an approval runs out. A test injects
    // its own; `clockOffsetMs` (test-only, from the environment) skews this host's wall clock.
    if (!options.clock && store.dialect === 'postgres') databaseClock = await DatabaseClock.start(store);
    const clock = options.clock ?? databaseClock ?? offsetClock(systemClock, config.clockOffsetMs);
    const ledgerId = await ensureLedgerId(store);
    const signingKey = signingKeyFromSeed(keys.signingSeed, logKeyName(ledgerId));
    await ensureSameKeys(store, signingKey.keyId, keys.masterKey);
    const dataKeys = new DataKeys(sodium, keys.masterKey, clock, monotonic);
    // Logs go to stderr (docs/cli.md): stdout is the verbs' own output, which `serve --json` keeps to JSON lines.
    const logger = options.logger ?? pino({ level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] }, pino.destination({ dest: 2, sync: true }));
    const ledger = new Ledger(store, sodium, dataKeys, signingKey, ledgerId, clock);
    const metrics = new Metrics(store, clock);
    store.onCommit = (units, seconds) => metrics.observeCommit(units, seconds);
    store.beforeAccountBatch = (trx, accountId) => ledger.holdChainHead(trx, accountId);
    // The operations domain owns its table; approvals change operations only through this port.
    const approvals = new Approvals({ store, ledger, clock, signingKey, logger, operations: operationPort({ store, ledger, clock }) }, { webhook: () => policies.webhook });
    metrics.sources.webhookBacklog = () => approvals.webhook.backlog();
    metrics.sources.chainHeadWrites = () => ledger.headWrites;
    const base = {
      config,
      store,
      clock,
      monotonic,
      logger,
      ledgerId,
      signingKey,
      ledger,
      principals: new Principals(store, clock, monotonic),
      policies,
      approvals,
      metrics,
      publicKeys: () => [publicKeyInfo(signingKey)],
      close: async () => {
        databaseClock?.stop();
        await store.close();
      },
    };
    return { ...base, operations: new Operations(base) };
  } catch (error) {
    databaseClock?.stop();
    await store.close();
    throw error;
  }
}

/**
 * Instances sharing one database must share its keys: one started with fresh key files would
 * sign checkpoints no verifier pinned and fail to unwrap every account's data key. The first
 * start records the signing key id and a check value of the master key; a mismatch stops start-up.
 */
async function ensureSameKeys(store: Store, signingKeyId: string, masterKey: Uint8Array): Promise<void> {
  const expected = {
    signing_key_id: signingKeyId,
    master_key_check: masterKeyCheck(masterKey),
  };
  const recorded = await recordOnce(store, expected);
  for (const key of Object.keys(expected) as Array<keyof typeof expected>) {
    if (recorded[key] !== expected[key]) {
      const which = key === 'signing_key_id' ? 'signing key' : 'master key';
      throw new KeyFileError(`this database was initialised with another ${which}: every instance on one database must share the same key files (or GATEHOUSE_MASTER_KEY / GATEHOUSE_SIGNING_KEY)`);
    }
  }
}

/** The ledger id names this ledger in checkpoint origins; it lives in the database so every instance agrees. */
async function ensureLedgerId(store: Store): Promise<string> {
  return (await recordOnce(store, { ledger_id: crypto.randomBytes(8).toString('hex') })).ledger_id!;
}

/**
 * Writes each meta value unless one is recorded already (the primary key decides when
 * instances start at once), and returns what the database holds.
 */
async function recordOnce(store: Store, values: Record<string, string>): Promise<Record<string, string>> {
  await store.transact((trx) =>
    trx.insertInto('meta').values(Object.entries(values).map(([key, value]) => ({ key, value })))
      .onConflict((oc) => oc.column('key').doNothing()).execute(),
  );
  const rows = await store.db.selectFrom('meta').select(['key', 'value']).where('key', 'in', Object.keys(values)).execute();
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}
