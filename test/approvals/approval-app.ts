import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { openContext } from '../../src/context.js';
import { startServer } from '../../src/http/server.js';
import { createFirstAdmin } from '../../src/bootstrap.js';
import type { Clock } from '../../src/core/time.js';
import { httpRequest, type TestApp, type TestResponse } from '../helpers/app.js';
import { createTestStore, type StoreKind } from '../helpers/stores.js';

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

/** The real service over a fresh store with a policies file written for the test. */
export async function startApprovalApp(t: ExecutionContext, kind: StoreKind, policies: object, options: { trustedProxies?: number } = {}): Promise<ApprovalApp> {
  const store = await createTestStore(kind);
  const file = path.join(store.dataDir, 'policies.json');
  fs.writeFileSync(file, JSON.stringify(policies));
  const clock = new TestClock();
  const context = await openContext({ ...store.config, policiesFile: file }, { clock });
  const adminKey = (await createFirstAdmin(context))!;
  const server = await startServer(context, { host: '127.0.0.1', port: 0, maxBodyBytes: 1024 * 1024, trustedProxies: options.trustedProxies });
  const keyFor = async (account: string, ...roles: Parameters<TestApp['keyFor']>[1][]) => (await context.principals.create({ account_id: account, roles })).key;
  const request: TestApp['request'] = (method, p, options = {}) => httpRequest(server.url, method, p, options);
  const app: ApprovalApp = {
    store, context, server, url: server.url, adminKey, keyFor, request, clock,
    gateway: await keyFor(ACCOUNT, 'gateway'),
    approver: await keyFor(ACCOUNT, 'approver'),
    approver2: await keyFor(ACCOUNT, 'approver'),
    claim: (key, body, as) => request('POST', '/v1/operations', { key: as ?? app.gateway, body, headers: { 'idempotency-key': key } }),
    decide: (id, decision, fingerprint, as, reason = 'checked the command') =>
      request('POST', `/v1/approvals/${id}/decisions`, { key: as ?? app.approver, body: { decision, fingerprint, reason } }),
    eventTypes: async (account = ACCOUNT) => (await context.store.db.selectFrom('events').select('type')
      .where('account_id', '=', account).orderBy('seq').execute()).map((e) => e.type),
    close: async () => {
      await context.approvals.idle();
      await server.close();
      await context.close();
      await store.drop();
    },
  };
  t.teardown(() => app.close());
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
