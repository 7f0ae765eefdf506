/**
 * Possible duplicates (docs/http-api.md): operations of one account with the same fingerprint
 * under different idempotency keys (keys are unique per account, so: different operations),
 * each created within `window_seconds` of the previous one in the group. That is what an
 * agent does when it times out and mints a new key for the same write.
 *
 * Index-driven: candidates come from `fingerprint_repeats` (one row per operation created
 * while its fingerprint already existed in the account, with the gap to the newest earlier
 * one), read by (account_id, gap_ms ≤ window), newest first. Only the fingerprints found
 * there are then read from operations, by (account_id, fingerprint, created_at).
 *
 * Groups come newest first, ordered by their anchor: the newest member that is itself a
 * candidate (normally the group's last operation). A group is emitted when the scan reaches
 * its anchor, so each group appears exactly once across pages and the cursor is a position
 * in the candidate scan.
 */
import { sql, type SqlBool } from 'kysely';
import type { OperationDeps } from './claim-types.js';
import type { Db } from '../store/store.js';
import { operationsJson, type OperationJson, type OperationRow } from './operation-json.js';
import { encodeDuplicatesCursor, type DuplicatesQuery } from './duplicates-params.js';

export interface DuplicateGroup {
  fingerprint: string;
  method: string;
  route: string;
  operations: OperationJson[];
}

export interface DuplicatesPage {
  items: DuplicateGroup[];
  next_cursor: string | null;
}

interface Candidate {
  operation_id: string;
  fingerprint: string;
  created_at: string;
  gap_ms: number;
}

interface Chain {
  rows: OperationRow[];
  anchorId: string | null;
}

const SCAN_BATCH = 200;

export async function duplicatesReport(deps: OperationDeps, accountId: string, query: DuplicatesQuery): Promise<DuplicatesPage> {
  const windowMs = query.windowSeconds * 1000;
  const sinceMs = query.since === undefined ? null : Date.parse(query.since);
  const chainsByFingerprint = new Map<string, Chain[]>();
  const found: Chain[] = [];
  let position = query.after;
  for (;;) {
    const batch = await candidates(deps, accountId, query, windowMs, position);
    // One query for every fingerprint of the batch not seen yet, instead of one per fingerprint.
    const unseen = [...new Set(batch.map((c) => c.fingerprint))].filter((f) => !chainsByFingerprint.has(f));
    for (const [fingerprint, chains] of await chainsOf(deps, accountId, unseen, query, windowMs)) chainsByFingerprint.set(fingerprint, chains);
    for (const candidate of batch) {
      position = { created_at: candidate.created_at, id: candidate.operation_id };
      // The operation it repeats was created before `since`: that pair is outside the report.
      if (sinceMs !== null && Date.parse(candidate.created_at) - Number(candidate.gap_ms) < sinceMs) continue;
      const chain = chainsByFingerprint.get(candidate.fingerprint)?.find((c) => c.anchorId === candidate.operation_id);
      if (chain) found.push(chain);
      if (found.length > query.limit) break;
    }
    if (found.length > query.limit || batch.length < SCAN_BATCH) break;
  }
  const page = found.slice(0, query.limit);
  const items = await Promise.all(page.map(async (chain): Promise<DuplicateGroup> => ({
    fingerprint: chain.rows[0]!.fingerprint,
    method: chain.rows[0]!.method,
    route: chain.rows[0]!.route,
    operations: await operationsJson(deps.store.db, deps.ledger, accountId, chain.rows),
  })));
  const last = page[page.length - 1];
  const anchor = last?.rows.find((row) => row.id === last.anchorId);
  return { items, next_cursor: found.length > query.limit && anchor ? encodeDuplicatesCursor(query, accountId, anchor) : null };
}

function candidates(deps: OperationDeps, accountId: string, query: DuplicatesQuery, windowMs: number, after: { created_at: string; id: string } | null): Promise<Candidate[]> {
  return candidatesSelect(deps.store.db, accountId, query, windowMs, after).execute();
}

/** Repeats within the window, newest first, after the position; the time window bounds them too. Exported for the bench's query plans. */
export function candidatesSelect(db: Db, accountId: string, query: DuplicatesQuery, windowMs: number, after: { created_at: string; id: string } | null) {
  const timeBounded = query.since !== undefined || query.until !== undefined;
  // With a time window the repeats are read along (account, created_at) in order, newest first,
  // filtering the gap: `+gap_ms` keeps the planner off the gap index, which would read every
  // close repeat of all time and sort them (215 ms p99 for one day of a 1,000,000-operation account).
  const gap = timeBounded ? sql<number>`+gap_ms` : sql.ref<number>('gap_ms');
  let select = db.selectFrom('fingerprint_repeats').select(['operation_id', 'fingerprint', 'created_at', 'gap_ms'])
    .where('account_id', '=', accountId).where(gap, '<=', windowMs);
  if (query.since !== undefined) select = select.where('created_at', '>=', query.since);
  if (query.until !== undefined) select = select.where('created_at', '<', query.until);
  if (after) select = select.where(sql<SqlBool>`(created_at, operation_id) < (${after.created_at}, ${after.id})`);
  return select.orderBy('created_at', 'desc').orderBy('operation_id', 'desc').limit(SCAN_BATCH);
}

/**
 * Per fingerprint, every group inside the time window: its operations in created_at order,
 * split wherever two neighbours are more than the window apart; groups of one are dropped.
 */
async function chainsOf(
  deps: OperationDeps, accountId: string, fingerprints: string[], query: DuplicatesQuery, windowMs: number,
): Promise<Map<string, Chain[]>> {
  const byFingerprint = new Map<string, Chain[]>(fingerprints.map((f) => [f, []]));
  if (fingerprints.length === 0) return byFingerprint;
  let select = deps.store.db.selectFrom('operations').selectAll('operations')
    .leftJoin('fingerprint_repeats as r', (join) => join.onRef('r.account_id', '=', 'operations.account_id').onRef('r.operation_id', '=', 'operations.id'))
    .select('r.gap_ms as repeat_gap_ms')
    .where('operations.account_id', '=', accountId).where('operations.fingerprint', 'in', fingerprints);
  if (query.since !== undefined) select = select.where('operations.created_at', '>=', query.since);
  if (query.until !== undefined) select = select.where('operations.created_at', '<', query.until);
  const rows = await select.orderBy('operations.fingerprint').orderBy('operations.created_at').orderBy('operations.id').execute();
  const sinceMs = query.since === undefined ? null : Date.parse(query.since);
  let current: Chain | null = null;
  let previous: { fingerprint: string; atMs: number } | null = null;
  for (const { repeat_gap_ms, ...row } of rows) {
    const atMs = Date.parse(row.created_at);
    if (!current || previous?.fingerprint !== row.fingerprint || atMs - previous.atMs > windowMs) {
      current = { rows: [], anchorId: null };
      byFingerprint.get(row.fingerprint)!.push(current);
    }
    current.rows.push(row as OperationRow);
    const isCandidate = repeat_gap_ms !== null && Number(repeat_gap_ms) <= windowMs && (sinceMs === null || atMs - Number(repeat_gap_ms) >= sinceMs);
    if (isCandidate) current.anchorId = row.id;
    previous = { fingerprint: row.fingerprint, atMs };
  }
  for (const [fingerprint, chains] of byFingerprint) byFingerprint.set(fingerprint, chains.filter((chain) => chain.rows.length >= 2));
  return byFingerprint;
}
