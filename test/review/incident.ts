import type { ExecutionContext } from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { StoreKind } from '../helpers/stores.js';
import { claim, report } from '../operations/claims.js';

export const ACCOUNT = 'shop';
export const OTHER_ACCOUNT = 'rival';

/** A clock that only moves when the test moves it: every operation gets its own created_at. */
export function steppedClock(startMs: number) {
  let now = startMs;
  return { now: () => now, advance: (ms: number) => { now += ms; } };
}

export interface Incident {
  app: TestApp;
  clock: ReturnType<typeof steppedClock>;
  gateway: string;
  auditor: string;
  rivalGateway: string;
  /** Operation ids by idempotency key, in creation order. */
  ids: Record<string, string>;
  created: string[];
  fingerprints: { refund: string; ticket: string };
}

export const START = Date.parse('2025-03-01T02:00:00.000Z');

const refund = { method: 'POST', route: '/v1/refunds', command: { order_id: 'ord_881', amount: 4200, currency: 'EUR' } };

/**
 * The 3 a.m. incident:
 * - run A claims a refund, its call times out after 30 s, and it mints a new key for the
 *   same write: both operations complete (the customer is refunded twice);
 * - run B retries correctly with its one key: one operation and a `replayed` event;
 * - an unrelated pair with one fingerprint hours apart (a ticket re-opened each shift);
 * - an operation left `unknown`, a PUT with a business key, and the rival account's refund
 *   with the very same fingerprint inputs (it must never show up in the shop's reports).
 */
export async function seedIncident(t: ExecutionContext, kind: StoreKind): Promise<Incident> {
  const clock = steppedClock(START);
  const app = await startTestApp(t, kind, { clock });
  const gateway = await app.keyFor(ACCOUNT, 'gateway');
  const auditor = await app.keyFor('audit-firm', 'auditor');
  const rivalGateway = await app.keyFor(OTHER_ACCOUNT, 'gateway');
  const ids: Record<string, string> = {};
  const created: string[] = [];
  const open = async (key: string, body: Record<string, unknown>, as = gateway) => {
    clock.advance(1000);
    const res = await claim(app, as, key, { lease_seconds: 3600, ...body });
    if (res.status !== 201) throw new Error(`claim ${key}: ${res.status} ${res.text}`);
    ids[key] = res.body.operation.id;
    if (as === gateway) created.push(key);
    return { id: res.body.operation.id as string, token: res.body.lease.token as string, fingerprint: res.body.operation.fingerprint as string };
  };
  const complete = async (op: { id: string; token: string }, status: number, body: unknown, as = gateway) => {
    await report(app, as, op.id, { type: 'sent', lease_token: op.token });
    const done = await report(app, as, op.id, { type: 'completed', lease_token: op.token, outcome: 'succeeded', response: { status, body } });
    if (done.status !== 200) throw new Error(`completed: ${done.status} ${done.text}`);
  };

  const a1 = await open('A-1', { ...refund, agent_run_id: 'run-A' });
  await report(app, gateway, a1.id, { type: 'sent', lease_token: a1.token });
  clock.advance(30_000); // the agent's HTTP call times out; it gives up on key A-1 ...
  const a2 = await open('A-2', { ...refund, agent_run_id: 'run-A' }); // ... and mints a new key for the same refund
  await complete(a2, 201, { refund_id: 're_2' });
  const a1done = await report(app, gateway, a1.id, { type: 'completed', lease_token: a1.token, outcome: 'succeeded', response: { status: 201, body: { refund_id: 're_1' } } });
  if (a1done.status !== 200) throw new Error(a1done.text);

  const bBody = { method: 'POST', route: '/v1/refunds', command: { order_id: 'ord_882', amount: 990, currency: 'EUR' }, agent_run_id: 'run-B' };
  const b1 = await open('B-1', bBody);
  await complete(b1, 201, { refund_id: 're_3' });
  clock.advance(5000);
  const retry = await claim(app, gateway, 'B-1', { lease_seconds: 3600, ...bBody });
  if (retry.status !== 200 || retry.body.outcome !== 'replayed') throw new Error(`retry: ${retry.status} ${retry.text}`);

  const ticket = { method: 'POST', route: '/v1/tickets/T-17/reopen', command: { reason: 'shift handover' } };
  clock.advance(3600_000);
  const n1 = await open('N-1', { ...ticket, agent_run_id: 'run-N1' });
  await complete(n1, 200, { ok: true });
  const put = await open('P-1', { method: 'PUT', route: '/v1/customers/C-7/notes', command: { note: 'called back' }, agent_run_id: 'run-N1', business_key: 'note:C-7' });
  await complete(put, 200, { ok: true });
  clock.advance(3 * 3600_000);
  const n2 = await open('N-2', { ...ticket, agent_run_id: 'run-N2' });
  await complete(n2, 200, { ok: true });
  await open('U-1', { method: 'POST', route: '/v1/refunds', command: { order_id: 'ord_900', amount: 1, currency: 'EUR' }, agent_run_id: 'run-U', lease_seconds: 5 });
  clock.advance(60_000); // its worker died: the lease runs out and it reads as unknown

  // The rival account: the same refund twice within seconds; never part of the shop's answers.
  const r1 = await open('R-1', { ...refund, agent_run_id: 'run-A' }, rivalGateway);
  await complete(r1, 201, {}, rivalGateway);
  const r2 = await open('R-2', { ...refund, agent_run_id: 'run-A' }, rivalGateway);
  await complete(r2, 201, {}, rivalGateway);
  return { app, clock, gateway, auditor, rivalGateway, ids, created, fingerprints: { refund: a1.fingerprint, ticket: n1.fingerprint } };
}
