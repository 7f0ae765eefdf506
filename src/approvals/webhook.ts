import crypto from 'node:crypto';
import { rfc3339 } from '../core/time.js';
import type { ApprovalDeps } from './records.js';
import { readRequestPayload } from './records.js';
import { unreachableReason } from './webhook-failure.js';

export interface WebhookTarget {
  url: string;
  secret: string;
}

const ATTEMPT_TIMEOUT_MS = 10_000;

/** `Gatehouse-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: the timestamp stops replays of old bodies. */
export function webhookSignature(secret: string, unixSeconds: number, body: string): string {
  const mac = crypto.createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * The body a chat tool receives for one approval request; null when the approval is gone.
 * Built from the committed approval at each try, so every try of one delivery sends the same body.
 */
export async function webhookBody(deps: ApprovalDeps, approvalId: string, publicBaseUrl: string | null): Promise<string | null> {
  const row = await deps.store.db.selectFrom('approvals').selectAll().where('id', '=', approvalId).executeTakeFirst();
  if (!row) return null;
  const { summary } = await readRequestPayload(deps.store.db, deps.ledger, row);
  return JSON.stringify({
    type: 'approval_requested', approval_id: row.id, operation_id: row.operation_id, account_id: row.account_id,
    summary, expires_at: rfc3339(Number(row.expires_at)), url: `${publicBaseUrl ?? ''}/ui/approvals/${encodeURIComponent(row.id)}`,
  });
}

/** One signed POST; null when the receiver took it (2xx), else what went wrong (never the secret, never the URL's userinfo). */
export async function postWebhook(deps: ApprovalDeps, target: WebhookTarget, body: string): Promise<string | null> {
  const signature = webhookSignature(target.secret, Math.floor(deps.clock.now() / 1000), body);
  try {
    const response = await fetch(target.url, {
      method: 'POST', body, redirect: 'error', signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      headers: { 'content-type': 'application/json', 'gatehouse-signature': signature },
    });
    await response.arrayBuffer().catch(() => undefined);
    return response.ok ? null : `answered ${response.status}`;
  } catch (err) {
    return unreachableReason(err, target);
  }
}
