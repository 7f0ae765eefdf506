// Client-side bookkeeping for the multi-instance tests: every answer the service acknowledged,
// with the ledger event it promises (contract §7), so the database can be checked afterwards.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { Cluster } from './cluster.js';

export type EventType = 'attempted' | 'retried' | 'replayed' | 'conflicted' | 'sent' | 'completed';

export interface Ack {
  account: string;
  operation_id: string;
  type: EventType;
}

export interface Answer {
  status: number;
  body: any;
}

/** A request that reached no live server (refused, reset): nothing was acknowledged. */
export class Unreachable extends Error {}

export async function post(baseUrl: string, path: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(baseUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new Unreachable(`${baseUrl}${path}: ${(error as Error).cause ?? error}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new Unreachable(`${baseUrl}${path}: body lost: ${error}`);
  }
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

export const claimBody = (n: number, variant = 'a') => ({ method: 'POST', route: '/v1/tickets', command: { title: `ticket ${n}`, variant, amount_minor: 100 + n } });

export function claim(baseUrl: string, key: string, idempotencyKey: string, body: unknown): Promise<Answer> {
  return post(baseUrl, '/v1/operations', key, body, { 'idempotency-key': idempotencyKey });
}

export function report(baseUrl: string, key: string, operationId: string, body: unknown): Promise<Answer> {
  return post(baseUrl, `/v1/operations/${operationId}/events`, key, body);
}

/** The acknowledged answers, and every answer that was not one the contract allows for the request. */
export class AckLog {
  readonly acks: Ack[] = [];
  readonly surprises: string[] = [];

  expect(what: string, answer: Answer, status: number, outcome?: string): boolean {
    const ok = answer.status === status && (outcome === undefined || answer.body?.outcome === outcome || answer.body?.error?.code === outcome);
    if (!ok) this.surprises.push(`${what}: expected ${status} ${outcome ?? ''}, got ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
    return ok;
  }

  ack(account: string, operation_id: string, type: EventType): void {
    this.acks.push({ account, operation_id, type });
  }
}

/** (account, operation, type) → how many events of that kind the database holds. */
export async function eventCounts(cluster: Cluster): Promise<Map<string, number>> {
  const rows = await cluster.query<{ account_id: string; operation_id: string; type: string; n: string }>(
    `select account_id, operation_id, type, count(*) as n from events group by account_id, operation_id, type`,
  );
  return new Map(rows.map((r) => [`${r.account_id} ${r.operation_id} ${r.type}`, Number(r.n)]));
}

export function ackCounts(acks: Ack[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const a of acks) counts.set(`${a.account} ${a.operation_id} ${a.type}`, (counts.get(`${a.account} ${a.operation_id} ${a.type}`) ?? 0) + 1);
  return counts;
}

/** Acknowledged events that the database does not hold (as many times as they were acknowledged). */
export async function missingAcks(cluster: Cluster, acks: Ack[]): Promise<string[]> {
  const stored = await eventCounts(cluster);
  return [...ackCounts(acks)].filter(([k, n]) => (stored.get(k) ?? 0) < n).map(([k, n]) => `${k}: acknowledged ${n}, stored ${stored.get(k) ?? 0}`);
}

/** Per account: its seq numbers are exactly 1..n. */
export async function seqGaps(cluster: Cluster): Promise<string[]> {
  const rows = await cluster.query<{ account_id: string; n: string; lo: string; hi: string }>(
    `select account_id, count(*) as n, min(seq) as lo, max(seq) as hi from events group by account_id`,
  );
  return rows.filter((r) => !(Number(r.lo) === 1 && Number(r.hi) === Number(r.n))).map((r) => `${r.account_id}: ${r.n} events, seq ${r.lo}..${r.hi}`);
}

/**
 * `gatehouse verify --database-url …` with the keys pinned from `GET /v1/keys` and the master key,
 * then `gatehouse export` and `gatehouse verify` offline on the file.
 */
export async function verifyOnlineAndExported(t: ExecutionContext, cluster: Cluster, liveUrl: string): Promise<{ accounts: Array<{ account_id: string; events: number }> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-verify-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const keysFile = path.join(dir, 'keys.json');
  fs.writeFileSync(keysFile, await (await fetch(`${liveUrl}/v1/keys`)).text());
  const masterKey = path.join(cluster.store.dataDir, 'master.key');

  const direct = await cluster.cli(['verify', '--database-url', cluster.url, '--keys', keysFile, '--master-key', masterKey, '--json']);
  t.is(direct.code, 0, `verify --database-url: ${direct.stdout}${direct.stderr}`);
  const report = JSON.parse(direct.stdout) as { ok: boolean; accounts: Array<{ account_id: string; events: number; first_bad_seq: number | null }> };
  t.true(report.ok);

  const file = path.join(dir, 'ledger.ndjson');
  const exported = await cluster.cli(['export', ...cluster.storeArgs, '--out', file]);
  t.is(exported.code, 0, `export: ${exported.stdout}${exported.stderr}`);
  const offline = await cluster.cli(['verify', file, '--keys', keysFile, '--master-key', masterKey, '--json']);
  t.is(offline.code, 0, `verify EXPORT: ${offline.stdout}${offline.stderr}`);
  const offlineReport = JSON.parse(offline.stdout) as { ok: boolean; accounts: Array<{ account_id: string; events: number }> };
  t.deepEqual(offlineReport.accounts.map((a) => [a.account_id, a.events]), report.accounts.map((a) => [a.account_id, a.events]), 'the export holds what the database holds');
  return report;
}
