import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import type { StoreKind } from '../helpers/stores.js';
import { runCli } from '../helpers/server-process.js';

/** A claim body for a ticket write; `extra` adds or overrides members. */
export function ticketClaim(title = 'printer on fire', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { method: 'POST', route: '/tickets', command: { title, priority: 'high' }, agent_run_id: 'run-1', ...extra };
}

export function claim(app: TestApp, key: string, idempotencyKey: string | null, body: unknown): Promise<TestResponse> {
  const headers: Record<string, string> = idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey };
  return app.request('POST', '/v1/operations', { key, body, headers });
}

export function report(app: TestApp, key: string, operationId: string, body: Record<string, unknown>): Promise<TestResponse> {
  return app.request('POST', `/v1/operations/${operationId}/events`, { key, body });
}

/** Claim, sent, completed: a finished operation with a stored response. */
export async function completedOperation(app: TestApp, key: string, idempotencyKey: string, response: Record<string, unknown>, body = ticketClaim()) {
  const created = await claim(app, key, idempotencyKey, body);
  if (created.status !== 201) throw new Error(`claim answered ${created.status}: ${created.text}`);
  const { operation, lease } = created.body;
  await report(app, key, operation.id, { type: 'sent', lease_token: lease.token });
  const done = await report(app, key, operation.id, { type: 'completed', lease_token: lease.token, outcome: 'succeeded', response });
  if (done.status !== 200) throw new Error(`completed answered ${done.status}: ${done.text}`);
  return { operation: done.body.operation, lease };
}

/** The event types recorded for one operation, in order. */
export async function eventTypes(app: TestApp, account: string, operationId: string): Promise<string[]> {
  const rows = await app.context.store.db.selectFrom('events').select('type')
    .where('account_id', '=', account).where('operation_id', '=', operationId).orderBy('seq').execute();
  return rows.map((r) => r.type);
}

export async function eventCount(app: TestApp, account: string): Promise<number> {
  const row = await app.context.store.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', account).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A clock the test can move forward, so lease expiry needs no sleeping. */
export function movableClock(): { now(): number; advance(ms: number): void } {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => { offset += ms; } };
}

/** `gatehouse verify` over the test's store, with the master key so every payload must decrypt too. */
export async function verifyExitCode(app: TestApp): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dbArgs = app.store.cliArgs.filter((_, i, all) => all[i] !== '--data-dir' && all[i - 1] !== '--data-dir');
  return runCli(['verify', ...dbArgs, '--data-dir', app.store.dataDir, '--master-key', path.join(app.store.dataDir, 'master.key')]);
}

/** The real service with a policies file, loaded the way `serve --config` does. */
export function startAppWithPolicies(t: ExecutionContext, kind: StoreKind, policies: unknown[]): Promise<TestApp> {
  return startTestApp(t, kind, { policies: { policies } });
}
