import crypto from 'node:crypto';
import { rfc3339 } from '../core/time.js';
import type { ApprovalDeps } from './records.js';
import { readRequestPayload } from './records.js';

export interface WebhookTarget {
  url: string;
  secret: string;
}

export interface WebhookOptions {
  target: () => WebhookTarget | null;
  /** Where the approver page is reachable, for the `url` member; null until the server knows. */
  publicBaseUrl: () => string | null;
  /** Waits between tries: five tries with exponential backoff by default. */
  backoffMs?: number[];
}

const DEFAULT_BACKOFF_MS = [1000, 2000, 4000, 8000];
/** How long to wait for the requesting transaction to commit before deciding it rolled back. */
const COMMIT_WAIT_MS = 10_000;
const ATTEMPT_TIMEOUT_MS = 10_000;

/** `Gatehouse-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: the timestamp stops replays of old bodies. */
export function webhookSignature(secret: string, unixSeconds: number, body: string): string {
  const mac = crypto.createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * Notifies a chat tool of each approval request. In memory on purpose: the claim
 * never waits for it and never fails because of it. A crash loses the deliveries
 * still queued (approvers still find the request in the pending list and the UI).
 */
export class WebhookNotifier {
  private readonly inFlight = new Set<Promise<void>>();
  /** Waits between tries; tests shorten them. */
  backoffMs: number[];

  constructor(private readonly deps: ApprovalDeps, private readonly options: WebhookOptions) {
    this.backoffMs = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  }

  /** Called inside the requesting transaction: delivery starts only once that transaction has committed. */
  enqueue(approvalId: string): void {
    if (!this.options.target()) return;
    const delivery = this.deliver(approvalId)
      .catch((err) => this.deps.logger.warn({ error: String(err), approval_id: approvalId }, 'approval webhook not delivered'))
      .finally(() => this.inFlight.delete(delivery));
    this.inFlight.add(delivery);
  }

  /** Deliveries not yet delivered or given up. */
  get backlog(): number {
    return this.inFlight.size;
  }

  /** Resolves when every queued delivery has finished or given up (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async deliver(approvalId: string): Promise<void> {
    const body = await this.bodyOnceCommitted(approvalId);
    if (body === null) return;
    const delays = this.backoffMs;
    for (let attempt = 0; ; attempt++) {
      const target = this.options.target();
      if (!target) return;
      if (await this.post(target, body, attempt)) return;
      if (attempt >= delays.length) throw new Error(`gave up after ${attempt + 1} tries`);
      await sleep(delays[attempt]!);
    }
  }

  private async post(target: WebhookTarget, body: string, attempt: number): Promise<boolean> {
    const signature = webhookSignature(target.secret, Math.floor(this.deps.clock.now() / 1000), body);
    try {
      const response = await fetch(target.url, {
        method: 'POST', body, redirect: 'error', signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        headers: { 'content-type': 'application/json', 'gatehouse-signature': signature },
      });
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) return true;
      this.deps.logger.warn({ status: response.status, attempt }, 'approval webhook answered an error');
    } catch (err) {
      this.deps.logger.warn({ error: String(err), attempt }, 'approval webhook unreachable');
    }
    return false;
  }

  /** Reads the approval outside the transaction: it appears once committed; absent for good means rolled back. */
  private async bodyOnceCommitted(approvalId: string): Promise<string | null> {
    const deadline = Date.now() + COMMIT_WAIT_MS;
    for (;;) {
      const row = await this.deps.store.db.selectFrom('approvals').selectAll().where('id', '=', approvalId).executeTakeFirst();
      if (row) {
        const { summary } = await readRequestPayload(this.deps.store.db, this.deps.ledger, row);
        const base = this.options.publicBaseUrl() ?? '';
        return JSON.stringify({
          type: 'approval_requested', approval_id: row.id, operation_id: row.operation_id, account_id: row.account_id,
          summary, expires_at: rfc3339(Number(row.expires_at)), url: `${base}/ui/approvals/${encodeURIComponent(row.id)}`,
        });
      }
      if (Date.now() > deadline) return null;
      await sleep(50);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
