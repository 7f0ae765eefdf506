// Client-side bookkeeping for the multi-instance tests: every answer the service acknowledged,
// with the ledger event it promises (docs/formats.md, Event types), so the database can be checked afterwards.
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

export interface Target {
  url: string;
  alive: boolean;
}

/**
 * One worker's loop until `until()`: a new key claimed on one instance, sometimes retried on
 * the other while it runs (in_progress), `sent` and `completed` through either, replayed, and
 * sometimes reused with another payload (conflict). Every answer must be the one the contract
 * gives; acknowledged ones go to the log. A request that reaches no live server marks that
 * instance dead and abandons the operation (its fate is unknown to the client: not acknowledged).
 */
export async function mixedWorker(log: AckLog, targets: Target[], account: string, key: string, tag: string, until: () => boolean): Promise<number> {
  let n = 0;
  const pick = () => {
    const live = targets.filter((t) => t.alive);
    if (live.length === 0) throw new Error('no live instance left');
    return live[Math.floor(Math.random() * live.length)]!;
  };
  const send = async (fn: (url: string) => Promise<Answer>): Promise<Answer | null> => {
    const target = pick();
    try {
      return await fn(target.url);
    } catch (error) {
      if (!(error instanceof Unreachable)) throw error;
      target.alive = false;
      return null;
    }
  };
  while (!until()) {
    const i = n++;
    const idem = `${tag}-${i}`;
    const body = claimBody(i);
    const created = await send((url) => claim(url, key, idem, body));
    if (!created || !log.expect(`claim ${idem}`, created, 201, 'created')) continue;
    const op = created.body.operation.id as string;
    const lease = created.body.lease.token as string;
    log.ack(account, op, 'attempted');
    if (Math.random() < 0.3) {
      const again = await send((url) => claim(url, key, idem, body));
      if (again && log.expect(`retry ${idem}`, again, 409, 'in_progress')) log.ack(account, op, 'retried');
    }
    const sent = await send((url) => report(url, key, op, { type: 'sent', lease_token: lease }));
    if (!sent || !log.expect(`sent ${op}`, sent, 200)) continue;
    log.ack(account, op, 'sent');
    const completed = await send((url) => report(url, key, op, { type: 'completed', lease_token: lease, outcome: 'succeeded', response: { status: 201, body: { ticket: i } } }));
    if (!completed || !log.expect(`completed ${op}`, completed, 200)) continue;
    log.ack(account, op, 'completed');
    const replay = await send((url) => claim(url, key, idem, body));
    if (replay && log.expect(`replay ${idem}`, replay, 200, 'replayed')) log.ack(account, op, 'replayed');
    if (Math.random() < 0.3) {
      const conflict = await send((url) => claim(url, key, idem, claimBody(i, 'changed')));
      if (conflict && log.expect(`conflict ${idem}`, conflict, 422, 'fingerprint_mismatch')) log.ack(account, op, 'conflicted');
    }
  }
  return n;
}
