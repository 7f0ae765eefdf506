import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Store } from '../store/store.js';
import type { Clock } from '../core/time.js';
import { RequestLatency } from './request-latency.js';

/** Sources read when /metrics is scraped, for what lives outside this process's counters. */
export interface MetricSources {
  /** Deliveries waiting in the webhook outbox (or queue). */
  webhookBacklog?: () => number | Promise<number>;
  /** Per witness, seconds since the newest checkpoint it has not cosigned was signed (0 when caught up). */
  witnessLag?: () => Promise<Array<{ witness: string; seconds: number }>>;
  /** This instance's chain head writes so far, by how each found the head it built on (Ledger.headWrites). */
  chainHeadWrites?: () => Readonly<Record<string, number>>;
}

/**
 * The service's Prometheus metrics (prom-client, one registry per context so tests and several
 * contexts in one process never share counters). Counters are bumped where the work is done.
 * Those bumped on every request (claim outcomes, request latency) are plain maps and typed arrays
 * that prom-client reads when /metrics is scraped: its own per-call label handling cost ~1 µs a
 * request (request-latency.ts). What the database already knows (events stored, checkpoint age)
 * is read at scrape time, so it counts only what committed, across every instance on a shared
 * PostgreSQL.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly sources: MetricSources = {};

  /** Claims answered by outcome, counted here and handed to prom-client when /metrics is read (countClaim). */
  readonly #claimsByOutcome = new Map<string, number>();

  readonly requestLatency = new RequestLatency(this.registry);

  readonly batchSize = new Histogram({
    name: 'gatehouse_store_batch_size', help: 'Units of work committed together in one transaction (group commit: SQLite, any units; PostgreSQL, one account\'s)',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256], registers: [this.registry],
  });

  readonly commitSeconds = new Histogram({
    name: 'gatehouse_store_commit_seconds', help: 'Time spent in COMMIT (the fsync on SQLite)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers: [this.registry],
  });

  constructor(store: Store, clock: Clock) {
    const sources = this.sources;
    const claimsByOutcome = this.#claimsByOutcome;
    new Counter({
      name: 'gatehouse_claims_total', help: 'Claims answered, by outcome (or error code)', labelNames: ['outcome'] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const [outcome, count] of claimsByOutcome) this.inc({ outcome }, count);
      },
    });
    // A counter read from the chain heads, not bumped here: events are never deleted, so the sum
    // only grows (rate() works), it counts only what committed, and it survives restarts. It is
    // the ledger's total, so every instance on one PostgreSQL reports the same value.
    new Counter({
      name: 'gatehouse_events_appended_total',
      help: 'Events appended to the ledger (all accounts, all instances: read from the chain heads at scrape time)', registers: [this.registry],
      async collect() {
        const row = await store.db.selectFrom('chains').select((eb) => eb.fn.sum<number | string | null>('size').as('events')).executeTakeFirst();
        this.reset();
        this.inc(Number(row?.events ?? 0));
      },
    });
    new Gauge({
      name: 'gatehouse_checkpoint_age_seconds', help: 'Seconds since each account\'s newest signed checkpoint', labelNames: ['account_id'] as const,
      registers: [this.registry],
      async collect() {
        const rows = await store.db.selectFrom('chains')
          .innerJoin('checkpoints', (join) => join.onRef('checkpoints.account_id', '=', 'chains.account_id').onRef('checkpoints.tree_size', '=', 'chains.checkpoint_size'))
          .select(['chains.account_id', 'checkpoints.created_at']).execute();
        this.reset();
        const now = clock.now();
        for (const row of rows) this.set({ account_id: row.account_id }, Math.max(0, (now - Date.parse(row.created_at)) / 1000));
      },
    });
    new Gauge({
      name: 'gatehouse_webhook_backlog', help: 'Approval webhook deliveries not yet delivered', registers: [this.registry],
      async collect() {
        this.set(sources.webhookBacklog ? await sources.webhookBacklog() : 0);
      },
    });
    new Counter({
      name: 'gatehouse_chain_head_writes_total',
      help: 'Chain head writes by this instance, by how each found the head: guessed (no read), guess_missed (then read), read',
      labelNames: ['head'] as const, registers: [this.registry],
      collect() {
        this.reset();
        for (const [head, count] of Object.entries(sources.chainHeadWrites?.() ?? {})) this.inc({ head }, count);
      },
    });
    new Gauge({
      name: 'gatehouse_witness_cosignature_lag_seconds', help: 'Per witness, how long the oldest checkpoint it has not cosigned has waited (0: it holds every newest checkpoint)',
      labelNames: ['witness'] as const, registers: [this.registry],
      async collect() {
        this.reset();
        for (const { witness, seconds } of (await sources.witnessLag?.()) ?? []) this.set({ witness }, seconds);
      },
    });
  }

  /**
   * One claim answered. Counted in a Map, not by the Counter's inc(): prom-client's inc with a
   * label costs ~0.2 µs and ~1,900 instructions (a string key built and looked up per call), once per claim.
   */
  countClaim(outcome: string): void {
    this.#claimsByOutcome.set(outcome, (this.#claimsByOutcome.get(outcome) ?? 0) + 1);
  }

  /** Called by the store after each COMMIT. */
  observeCommit(units: number, seconds: number): void {
    this.batchSize.observe(units);
    this.commitSeconds.observe(seconds);
  }
}
