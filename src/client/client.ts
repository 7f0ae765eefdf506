// The typed HTTP client: one method per route of the v1 contract. Error answers become
// GatehouseErrors; outcome bodies (in_progress, unknown, denied, replayed, ...) are values.
import type { JsonObject, JsonValue } from '../core/json.js';
import type { CreatePrincipalBody, DecideApprovalBody, FingerprintBody } from '../core/request-bodies.js';
import { GatehouseError } from './errors.js';
import { FetchTransport } from './fetch-transport.js';
import { NodeTransport } from './node-transport.js';
import type { Transport, TransportResponse } from './transport.js';
import type {
  Approval,
  AuditPage,
  Checkpoint,
  ClaimRequest,
  ClaimResponse,
  Operation,
  OperationEvent,
  OperationState,
  Page,
  Principal,
  ResolveRequest,
  SigningKey,
  TimelineEvent,
} from './types.js';

export interface GatehouseClientOptions {
  /** e.g. `http://127.0.0.1:8080` (no trailing `/v1`). */
  baseUrl: string;
  /** `gh_…` key of the principal the client acts as. */
  apiKey?: string;
  /**
   * Where people open Gatehouse's pages (the approval link), when it differs from `baseUrl`
   * (a gateway that reaches Gatehouse through an internal address or a proxy). Default: `baseUrl`.
   */
  publicUrl?: string;
  /** Per-request timeout in milliseconds (default 10 000). */
  timeoutMs?: number;
  /**
   * Sends every request through this function instead of the built-in node:http transport (a
   * keep-alive pool): a seam for tests, or for a runtime with its own fetch.
   */
  fetch?: typeof fetch;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: JsonValue | undefined;
  text: string;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined | null>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Overrides the client's timeout for this request. */
  timeoutMs?: number;
  /** Send without Authorization (GET /v1/keys, /v1/healthz). */
  anonymous?: boolean;
  /**
   * Sending the request twice does what sending it once does (a claim under its key, an identical
   * report): it may then be sent again when a kept-alive connection turns out closed under it.
   * GET and HEAD are always taken as such.
   */
  repeatable?: boolean;
}

export class GatehouseClient {
  readonly baseUrl: string;
  readonly publicUrl: string;
  readonly timeoutMs: number;
  readonly #apiKey: string | undefined;
  readonly #transport: Transport;

  constructor(options: GatehouseClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.publicUrl = (options.publicUrl ?? options.baseUrl).replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.#transport = options.fetch ? new FetchTransport(this.baseUrl, options.fetch) : new NodeTransport(this.baseUrl);
  }

  /**
   * Closes the idle kept-alive connections to Gatehouse. Not needed for a process to exit (idle
   * connections never hold it open); for a short-lived tool that wants its sockets gone at once.
   * Requests after it open new connections.
   */
  close(): void {
    this.#transport.close();
  }

  /** The approver page of an approval, for a person to open. */
  approvalUrl(approvalId: string): string {
    return `${this.publicUrl}/ui/approvals/${encodeURIComponent(approvalId)}`;
  }

  /** Low-level request: never throws on an HTTP status, only on transport failure. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<RawResponse> {
    return rawResponse(await this.#send(method, path, options));
  }

  #send(method: string, path: string, options: RequestOptions): Promise<TransportResponse> {
    let target = path;
    if (options.query) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(options.query)) {
        if (value !== undefined && value !== null) params.set(name, String(value));
      }
      const qs = params.toString();
      if (qs) target += `?${qs}`;
    }
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (!options.anonymous && this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    return this.#transport.send({
      method, target, headers, body: payload,
      timeoutMs: options.timeoutMs ?? this.timeoutMs,
      repeatable: options.repeatable ?? (method === 'GET' || method === 'HEAD'),
      label: `${method} ${path}`,
    });
  }

  /** Request that expects a 2xx JSON answer; anything else becomes a GatehouseError. */
  async #json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.request(method, path, options);
    if (res.status >= 200 && res.status < 300 && res.body !== undefined) return res.body as T;
    throw errorFrom(res);
  }

  // ---- operations -------------------------------------------------------------------------

  /**
   * `POST /v1/operations`. Every row of the contract's outcome table comes back as a value
   * (including 403 `denied`, 409 `in_progress` and 409 `unknown`); error rows
   * (`fingerprint_mismatch`, `scope_busy`, 400s, ...) throw a GatehouseError.
   */
  async claim(idempotencyKey: string, body: ClaimRequest, options: { timeoutMs?: number } = {}): Promise<ClaimResponse> {
    const answer = await this.#send('POST', '/v1/operations', {
      body,
      headers: { 'idempotency-key': idempotencyKey },
      timeoutMs: options.timeoutMs,
      // The same key twice is one claim: the second answers with the operation the first made.
      repeatable: true,
    });
    const parsed = jsonBody(answer);
    if (!isOutcomeBody(parsed)) throw errorFrom(rawResponse(answer, parsed));
    // The parsed body is this call's own: it becomes the result, with the status and the hint added.
    const result = parsed as unknown as ClaimResponse;
    result.status = answer.status;
    const retryAfter = answer.header('retry-after');
    if (retryAfter !== null && /^\d+$/.test(retryAfter.trim())) result.retryAfterSeconds = Number(retryAfter.trim());
    return result;
  }

  /** `POST /v1/operations/{id}/events` (the lease holder). */
  async reportEvent(operationId: string, event: OperationEvent, options: { timeoutMs?: number } = {}): Promise<{ operation: Operation } & JsonObject> {
    // An identical report answers as the first one did and records nothing (docs/http-api.md, reports).
    return this.#json('POST', `/v1/operations/${enc(operationId)}/events`, { body: event, timeoutMs: options.timeoutMs, repeatable: true });
  }

  heartbeat(operationId: string, leaseToken: string) {
    return this.reportEvent(operationId, { type: 'heartbeat', lease_token: leaseToken });
  }

  /** `POST /v1/operations/{id}/resolve` (admin): settle an `unknown` operation. */
  async resolve(operationId: string, body: ResolveRequest): Promise<{ operation: Operation }> {
    return this.#json('POST', `/v1/operations/${enc(operationId)}/resolve`, { body });
  }

  /** `GET /v1/operations/{id}`. */
  async getOperation(operationId: string): Promise<Operation> {
    const body = await this.#json<{ operation: Operation }>('GET', `/v1/operations/${enc(operationId)}`);
    return body.operation;
  }

  /** `GET /v1/operations?idempotency_key=K`: the operation a key names, or null. */
  async findByKey(idempotencyKey: string, options: { timeoutMs?: number } = {}): Promise<Operation | null> {
    const page = await this.#json<Page<Operation>>('GET', '/v1/operations', {
      query: { idempotency_key: idempotencyKey },
      timeoutMs: options.timeoutMs,
    });
    return page.items[0] ?? null;
  }

  /** `GET /v1/operations?state=…&limit=…&cursor=…`. */
  async listOperations(query: { state: OperationState; limit?: number; cursor?: string | null }): Promise<Page<Operation>> {
    return this.#json('GET', '/v1/operations', { query: { state: query.state, limit: query.limit, cursor: query.cursor } });
  }

  /** `GET /v1/operations/{id}/timeline`: the operation's audit events in order. */
  async timeline(operationId: string): Promise<TimelineEvent[]> {
    const body = await this.#json<{ items?: TimelineEvent[]; events?: TimelineEvent[] } | TimelineEvent[]>(
      'GET',
      `/v1/operations/${enc(operationId)}/timeline`,
    );
    if (Array.isArray(body)) return body;
    return body.items ?? body.events ?? [];
  }

  // ---- approvals --------------------------------------------------------------------------

  async listApprovals(query: { state?: Approval['state']; limit?: number; cursor?: string | null } = {}): Promise<Page<Approval>> {
    return this.#json('GET', '/v1/approvals', { query: { state: query.state ?? 'pending', limit: query.limit, cursor: query.cursor } });
  }

  async getApproval(approvalId: string): Promise<Approval> {
    const body = await this.#json<{ approval?: Approval } & Partial<Approval>>('GET', `/v1/approvals/${enc(approvalId)}`);
    return (body.approval ?? body) as Approval;
  }

  /** `POST /v1/approvals/{id}/decisions`; `fingerprint` is the one the approver was shown. */
  async decide(
    approvalId: string,
    decision: DecideApprovalBody,
  ): Promise<{ approval: Approval } & JsonObject> {
    return this.#json('POST', `/v1/approvals/${enc(approvalId)}/decisions`, { body: decision });
  }

  // ---- fingerprint, keys, health ----------------------------------------------------------

  async fingerprint(body: FingerprintBody): Promise<string> {
    const res = await this.#json<{ fingerprint: string }>('POST', '/v1/fingerprint', { body });
    return res.fingerprint;
  }

  /** `GET /v1/keys` (no auth). Pin what this returns out of band; do not trust it per request. */
  async keys(): Promise<SigningKey[]> {
    const res = await this.#json<{ keys: SigningKey[] }>('GET', '/v1/keys', { anonymous: true });
    return res.keys;
  }

  async healthz(): Promise<JsonValue> {
    return this.#json('GET', '/v1/healthz', { anonymous: true });
  }

  // ---- audit ------------------------------------------------------------------------------

  async auditEvents(query: { account_id: string; after_seq?: number; limit?: number }): Promise<AuditPage> {
    return this.#json('GET', '/v1/audit/events', { query: { ...query } });
  }

  async latestCheckpoint(accountId: string): Promise<Checkpoint> {
    const body = await this.#json<{ checkpoint?: Checkpoint } & Partial<Checkpoint>>('GET', '/v1/audit/checkpoints/latest', {
      query: { account_id: accountId },
    });
    return (body.checkpoint ?? body) as Checkpoint;
  }

  async createCheckpoint(accountId: string): Promise<Checkpoint> {
    const body = await this.#json<{ checkpoint?: Checkpoint } & Partial<Checkpoint>>('POST', '/v1/audit/checkpoints', {
      body: { account_id: accountId },
    });
    return (body.checkpoint ?? body) as Checkpoint;
  }

  /** `GET /v1/audit/export` as NDJSON text (what `gatehouse verify` reads). */
  async exportAudit(accountId?: string): Promise<string> {
    const res = await this.request('GET', '/v1/audit/export', {
      query: { account_id: accountId },
      headers: { accept: 'application/x-ndjson, application/json' },
    });
    if (res.status !== 200) throw errorFrom(res);
    return res.text;
  }

  // ---- principals -------------------------------------------------------------------------

  async createPrincipal(body: CreatePrincipalBody): Promise<{ principal: Principal; key: string }> {
    return this.#json('POST', '/v1/principals', { body });
  }
}

/** The answer, its JSON body parsed. */
function rawResponse(res: TransportResponse, body = jsonBody(res)): RawResponse {
  // An own, enumerable accessor: read or spread, `headers` is the answer's Headers, built only then.
  return { status: res.status, get headers() { return res.headers; }, body, text: res.text };
}

/** The body as JSON when the answer says it is JSON; undefined for NDJSON and for a body that does not parse. */
function jsonBody(res: TransportResponse): JsonValue | undefined {
  const text = res.text;
  const contentType = res.header('content-type') ?? '';
  if (text.length === 0 || !contentType.includes('json') || contentType.includes('ndjson')) return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function isOutcomeBody(body: JsonValue | undefined): body is JsonObject & { outcome: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  return !('error' in body) && typeof body.outcome === 'string';
}

/** Turns a non-success answer into a GatehouseError with the contract's code and extra fields. */
export function errorFrom(res: RawResponse): GatehouseError {
  const body = res.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const error = body.error;
    if (error && typeof error === 'object' && !Array.isArray(error) && typeof error.code === 'string') {
      const { code, message, ...extra } = error;
      return new GatehouseError(code, typeof message === 'string' ? message : code, res.status, extra);
    }
  }
  const snippet = res.text.slice(0, 200);
  return new GatehouseError('unexpected_response', `HTTP ${res.status}: ${snippet}`, res.status, {});
}
