import crypto from 'node:crypto';
import type { ExecutionContext } from 'ava';
import type { Logger } from 'pino';
import type { Clock } from '../../src/core/time.js';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import type { StoreKind } from '../helpers/stores.js';

/** A clock the test moves forward, so TTLs run out without sleeping. */
export class TestClock implements Clock {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}

export interface ApprovalApp extends TestApp {
  clock: TestClock;
  gateway: string;
  approver: string;
  approver2: string;
  /** `POST /v1/operations` with an Idempotency-Key, as a gateway would. */
  claim(key: string, body: Record<string, unknown>, as?: string): Promise<TestResponse>;
  decide(approvalId: string, decision: 'approve' | 'deny', fingerprint: string, as?: string, reason?: string): Promise<TestResponse>;
  eventTypes(account?: string): Promise<string[]>;
}

export const ACCOUNT = 'acme';

/** The real service over a fresh store with a policies file written for the test, and the keys an approval needs. */
export async function startApprovalApp(t: ExecutionContext, kind: StoreKind, policies: object, options: { trustedProxies?: number; logger?: Logger } = {}): Promise<ApprovalApp> {
  const clock = new TestClock();
  const base = await startTestApp(t, kind, { clock, policies, trustedProxies: options.trustedProxies, logger: options.logger });
  const app: ApprovalApp = {
    ...base,
    clock,
    gateway: await base.keyFor(ACCOUNT, 'gateway'),
    approver: await base.keyFor(ACCOUNT, 'approver'),
    approver2: await base.keyFor(ACCOUNT, 'approver'),
    claim: (key, body, as) => base.request('POST', '/v1/operations', { key: as ?? app.gateway, body, headers: { 'idempotency-key': key } }),
    decide: (id, decision, fingerprint, as, reason = 'checked the command') =>
      base.request('POST', `/v1/approvals/${id}/decisions`, { key: as ?? app.approver, body: { decision, fingerprint, reason } }),
    eventTypes: async (account = ACCOUNT) => (await base.context.store.db.selectFrom('events').select('type')
      .where('account_id', '=', account).orderBy('seq').execute()).map((e) => e.type),
  };
  return app;
}

/** A policy that needs approval on POST /payments, with the given approval settings. */
export function paymentsPolicy(approval: Record<string, number> = {}, extra: Record<string, unknown> = {}): object {
  return { policies: [{ method: 'POST', route: '/payments', approval: { approvers: 1, ttl_seconds: 600, request_ttl_seconds: 3600, ...approval } }], ...extra };
}

export function payment(amount = 4200, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    method: 'POST', route: '/payments', command: { amount, currency: 'EUR', to: 'DE89 3704 0044 0532 0130 00' },
    summary: { target: 'Supplier GmbH', operation: 'Pay invoice 1182', consequence: `Sends ${amount / 100} EUR`, reversible: false },
    ...extra,
  };
}

export function newKey(): string {
  return `pay-${crypto.randomBytes(6).toString('hex')}`;
}
