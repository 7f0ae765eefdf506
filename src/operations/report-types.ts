import type { JsonObject } from '../core/json.js';
import { DomainError } from '../core/errors.js';
import type { ReportOperationBody } from '../core/request-bodies.js';
import type { OperationReport } from '../core/wire.js';

/** The body of `POST /v1/operations/{id}/events` as its schema admits it (schema/requests/report-operation.json). */
export type RawReport = ReportOperationBody;

export type ReportBody = OperationReport;

/** Each type's own members, required where the type needs them; members another type uses are refused, not ignored. */
export function normalizeReport(raw: RawReport): ReportBody {
  const { type, lease_token } = raw;
  const allowed: Record<ReportBody['type'], string[]> = {
    heartbeat: [], sent: [], canceled: [], accepted: ['provider_ref'], completed: ['outcome', 'response'],
  };
  for (const member of ['provider_ref', 'outcome', 'response'] as const) {
    const wanted = allowed[type].includes(member);
    if (wanted && raw[member] === undefined) throw new DomainError('invalid_request', `the member "${member}" is required for a "${type}" report`);
    if (!wanted && raw[member] !== undefined) throw new DomainError('invalid_request', `the member "${member}" is not allowed in a "${type}" report`);
  }
  switch (type) {
    case 'accepted': return { type, lease_token, provider_ref: raw.provider_ref! };
    case 'completed': return { type, lease_token, outcome: raw.outcome!, response: raw.response! };
    default: return { type, lease_token };
  }
}

/** What "the same report" means: its type and data, without the lease token (checked on its own, first). */
export function reportData(body: ReportBody): JsonObject {
  const { lease_token: _token, ...data } = body;
  return data as unknown as JsonObject;
}
