import type { Db, UnitOfWork } from '../store/store.js';
import { rfc3339 } from '../core/time.js';
import type { ApprovalDeps } from './records.js';
import { postWebhook, webhookBody, type WebhookTarget } from './webhook.js';

export interface WebhookOutboxOptions {
  target: () => WebhookTarget | null;
  /** Where the approver page is reachable, for the `url` member; null until the server knows. */
  publicBaseUrl: () => string | null;
  /** Waits between tries, the last one repeated for as long as the approval waits for a decision. */
  backoffMs?: number[];
}

/** Doubling from 1 s to 5 min, then every 5 min. */
const DEFAULT_BACKOFF_MS = Array.from({ length: 10 }, (_, i) => Math.min(1000 * 2 ** i, 300_000));
/** Rows claimed per pass. */
const BATCH = 20;
/** An instance owns a claimed row this long: longer than one try (10 s), short enough that a crashed instance's rows come back soon. */
const CLAIM_MS = 15_000;
/** How often an instance looks for rows it was not told about (another instance's, or left by a restart). */
const POLL_MS = 2_000;

/**
 * The approval webhook's durable outbox. The request writes a row in its own transaction
 * (`enqueue`); a delivery loop started by `serve` claims due rows (FOR UPDATE SKIP LOCKED on
 * PostgreSQL, plus a claim time, so instances never post one row at once), posts them signed,
 * and deletes a row once delivered or reschedules it with exponential backoff. After-commit
 * wakes the loop, so a delivery starts as soon as its request committed, and never after a
 * rollback; a crash loses nothing: the rows are found again on restart.
 *
 * At least once (docs/http-api.md, Approvals), for as long as the notice asks for something: a
 * delivery is tried until the receiver takes it, or until its approval no longer waits for a
 * decision (decided, or past its expiry), when it is given up: there is nothing left to approve.
 * A fixed number of tries would drop the notice of an approval that still waits, when its
 * receiver is down for longer than the tries last.
 */
export class WebhookOutbox {
  /** Waits between tries; tests shorten them. */
  backoffMs: number[];
  private running = false;
  private pass: Promise<void> | null = null;
  private again = false;
  private poll: NodeJS.Timeout | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: ApprovalDeps, private readonly options: WebhookOutboxOptions) {
    this.backoffMs = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  }

  /** Inside the requesting transaction: the row commits with the request or not at all. */
  async enqueue(trx: Db, work: UnitOfWork, approval: { id: string; account_id: string }): Promise<void> {
    if (!this.options.target()) return;
    const now = this.deps.clock.now();
    await trx.insertInto('webhook_outbox').values({
      approval_id: approval.id, account_id: approval.account_id, attempts: 0, next_attempt_at: now,
      claimed_until: null, failed_at: null, last_error: null, created_at: rfc3339(now),
    }).execute();
    work.afterCommit(() => this.kick());
  }

  /** Deliveries not yet made and not given up (for /metrics). */
  async backlog(): Promise<number> {
    const { count } = await this.deps.store.db.selectFrom('webhook_outbox').select((eb) => eb.fn.countAll<number>().as('count'))
      .where('failed_at', 'is', null).executeTakeFirstOrThrow();
    return Number(count);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.poll = setInterval(() => this.kick(), POLL_MS);
    this.poll.unref();
    this.kick();
  }

  /** Stops the loop and waits for the tries in flight; what is left stays in the outbox for the next start. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.poll) clearInterval(this.poll);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.pass;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Resolves once this instance's loop has delivered or given up every pending row (tests, before shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      await this.pass;
      await Promise.allSettled([...this.inFlight]);
      if (!this.running || !this.options.target() || (await this.backlog()) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
      this.kick();
    }
  }

  /** Runs a pass now, or right after the one running. */
  kick(): void {
    if (!this.running) return;
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = this.claimAndDeliver()
      .catch((err) => this.deps.logger.error({ err }, 'approval webhook pass failed'))
      .finally(() => {
        this.pass = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async claimAndDeliver(): Promise<void> {
    const target = this.options.target();
    if (!target) return;
    const now = this.deps.clock.now();
    // A read first: most passes find nothing due and need no write transaction.
    const any = await this.dueRows(this.deps.store.db, now).select('approval_id').limit(1).executeTakeFirst();
    if (!any) return;
    const claimed = await this.deps.store.transact(async (trx) => {
      const due = await this.deps.store.forUpdate(this.dueRows(trx, now).select(['approval_id', 'attempts']).orderBy('next_attempt_at').limit(BATCH), { skipLocked: true })
        .execute();
      if (due.length === 0) return due;
      await trx.updateTable('webhook_outbox').set({ claimed_until: now + CLAIM_MS })
        .where('approval_id', 'in', due.map((row) => row.approval_id)).execute();
      return due;
    });
    for (const row of claimed) {
      const delivery = this.deliver(target, row.approval_id, Number(row.attempts))
        .catch((err) => this.deps.logger.error({ err, approval_id: row.approval_id }, 'approval webhook delivery failed'))
        .finally(() => this.inFlight.delete(delivery));
      this.inFlight.add(delivery);
    }
    if (claimed.length === BATCH) this.again = true;
  }

  private dueRows(db: Db, now: number) {
    return db.selectFrom('webhook_outbox')
      .where('failed_at', 'is', null).where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]));
  }

  /** Pending and not past its expiry: an approver can still act on the notice. */
  private async awaitsDecision(approvalId: string, now: number): Promise<boolean> {
    const approval = await this.deps.store.db.selectFrom('approvals').select(['state', 'expires_at'])
      .where('id', '=', approvalId).executeTakeFirst();
    return approval !== undefined && approval.state === 'pending' && Number(approval.expires_at) > now;
  }

  private async deliver(target: WebhookTarget, approvalId: string, attempts: number): Promise<void> {
    const body = await webhookBody(this.deps, approvalId, this.options.publicBaseUrl());
    const failure = body === null ? null : await postWebhook(this.deps, target, body);
    if (failure === null) {
      await this.deps.store.transact((trx) => trx.deleteFrom('webhook_outbox').where('approval_id', '=', approvalId).execute());
      return;
    }
    const tried = attempts + 1;
    const now = this.deps.clock.now();
    const giveUp = !(await this.awaitsDecision(approvalId, now));
    const wait = giveUp ? 0 : this.backoffMs[Math.min(tried, this.backoffMs.length) - 1]!;
    this.deps.logger.warn({ approval_id: approvalId, attempt: tried, error: failure },
      giveUp ? 'approval webhook not delivered: gave up, the approval no longer waits for a decision' : 'approval webhook not delivered yet');
    await this.deps.store.transact((trx) => trx.updateTable('webhook_outbox')
      .set({ attempts: tried, next_attempt_at: now + wait, claimed_until: null, failed_at: giveUp ? now : null, last_error: failure })
      .where('approval_id', '=', approvalId).execute());
    if (!giveUp && this.running) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.kick();
      }, wait);
      timer.unref();
      this.timers.add(timer);
    }
  }
}
