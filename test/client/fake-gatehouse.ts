// An in-memory stand-in for the operations and approvals routes, served through a fake `fetch`,
// so the client's workflow can be tested without the server. It follows the contract's outcome
// table closely enough for the client's decisions; it is not a second implementation of it.
import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { canonicalize } from '../../src/core/jcs.js';
import type { JsonObject, JsonValue } from '../../src/core/json.js';
import type { Grant, Operation, StoredResponse } from '../../src/client/types.js';

interface FakeOp extends Operation {
  leaseToken: string | null;
  leaseExpires: number;
  command: JsonValue;
  needsApproval: boolean;
  approvalId: string | null;
  grant: Grant | null;
}

type Drop = { match: (method: string, path: string, body: JsonObject | undefined) => boolean; when: 'before' | 'after'; times: number };

export class FakeGatehouse {
  readonly account = 'acct_1';
  readonly ops = new Map<string, FakeOp>();
  readonly byKey = new Map<string, string>();
  readonly requests: Array<{ method: string; path: string; key?: string; body?: JsonObject }> = [];
  readonly reports: Array<{ id: string; type: string; body: JsonObject }> = [];
  readonly drops: Drop[] = [];
  readonly keyId = 'key_test';
  readonly publicKeyRaw: string;
  readonly #privateKey: KeyObject;
  /** Routes that need approval. */
  approvalRoutes = new Set<string>();
  /** `serve --max-body`: a request body over it is refused 413 `payload_too_large`, nothing done. */
  maxBodyBytes = Infinity;
  now = () => Date.now();
  seq = 0;

  constructor() {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    this.#privateKey = privateKey;
    const der = publicKey.export({ format: 'der', type: 'spki' });
    this.publicKeyRaw = der.subarray(der.length - 32).toString('base64');
  }

  /** Drops the connection of the next matching request, before or after the server acted on it. */
  drop(match: Drop['match'], when: Drop['when'], times = 1) {
    this.drops.push({ match, when, times });
  }

  signGrant(fields: Omit<Grant, 'signature'>, key: KeyObject = this.#privateKey): Grant {
    const signature = sign(null, Buffer.from(canonicalize(fields as unknown as JsonObject)), key).toString('base64url');
    return { ...fields, signature };
  }

  approve(opId: string, ttlMs = 60_000) {
    const op = this.ops.get(opId)!;
    op.state = 'approved';
    const approvedAt = this.now();
    op.grant = this.signGrant({
      approval_id: op.approvalId!,
      operation_id: op.id,
      account_id: op.account_id,
      idempotency_key: op.idempotency_key,
      fingerprint: op.fingerprint,
      approved_by: ['prn_approver'],
      approved_at: new Date(approvedAt).toISOString(),
      expires_at: new Date(approvedAt + ttlMs).toISOString(),
      key_id: this.keyId,
    });
  }

  /** Lets a lease run out, as the sweeper would. */
  expireLease(opId: string) {
    const op = this.ops.get(opId)!;
    op.leaseToken = `expired-${randomUUID()}`;
    if (!['succeeded', 'failed', 'canceled', 'denied'].includes(op.state)) op.state = 'unknown';
  }

  fetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const method = (init?.method ?? 'GET').toUpperCase();
    const headers = new Headers(init?.headers);
    const body = init?.body ? (JSON.parse(String(init.body)) as JsonObject) : undefined;
    const key = headers.get('idempotency-key') ?? undefined;
    this.requests.push({ method, path: url.pathname + url.search, key, body });
    const drop = this.drops.find((d) => d.times > 0 && d.match(method, url.pathname + url.search, body));
    if (drop?.when === 'before') {
      drop.times--;
      throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
    }
    const [status, answer, extraHeaders] = Buffer.byteLength(String(init?.body ?? '')) > this.maxBodyBytes
      ? err(413, 'payload_too_large')
      : this.#route(method, url, key, body);
    if (drop?.when === 'after') {
      drop.times--;
      throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
    }
    return new Response(JSON.stringify(answer), { status, headers: { 'content-type': 'application/json', ...extraHeaders } });
  };

  #public(op: FakeOp): Operation {
    const { leaseToken: _t, leaseExpires: _e, command: _c, needsApproval: _n, approvalId: _a, grant: _g, ...rest } = op;
    return rest;
  }

  #route(method: string, url: URL, key: string | undefined, body: JsonObject | undefined): [number, JsonValue, Record<string, string>?] {
    const path = url.pathname;
    if (method === 'POST' && path === '/v1/operations') return this.#claim(key!, body!);
    if (method === 'GET' && path === '/v1/operations') {
      const k = url.searchParams.get('idempotency_key');
      const id = k ? this.byKey.get(k) : undefined;
      return [200, { items: id ? [this.#public(this.ops.get(id)!) as unknown as JsonObject] : [], next_cursor: null }];
    }
    let m = /^\/v1\/operations\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const op = this.ops.get(m[1]!);
      return op ? [200, { operation: this.#public(op) as unknown as JsonObject }] : err(404, 'not_found');
    }
    m = /^\/v1\/operations\/([^/]+)\/events$/.exec(path);
    if (method === 'POST' && m) return this.#event(m[1]!, body!);
    return err(404, 'not_found');
  }

  #claim(key: string, body: JsonObject): [number, JsonValue, Record<string, string>?] {
    const fingerprint = createHash('sha256')
      .update(canonicalize({ account_id: this.account, command: body.command!, method: body.method!, route: body.route! }))
      .digest('hex');
    const existingId = this.byKey.get(key);
    if (!existingId) {
      const id = `op_${++this.seq}`;
      const needsApproval = this.approvalRoutes.has(String(body.route));
      const now = new Date(this.now()).toISOString();
      const op: FakeOp = {
        id,
        account_id: this.account,
        idempotency_key: key,
        fingerprint,
        method: String(body.method),
        route: String(body.route),
        state: needsApproval ? 'awaiting_approval' : 'running',
        business_key: null,
        exclusive_scope: null,
        agent_run_id: null,
        provider_ref: null,
        created_at: now,
        updated_at: now,
        leaseToken: null,
        leaseExpires: 0,
        command: body.command!,
        needsApproval,
        approvalId: needsApproval ? `apr_${this.seq}` : null,
        grant: null,
      };
      this.ops.set(id, op);
      this.byKey.set(key, id);
      if (needsApproval) return [202, { outcome: 'approval_required', execute: false, operation: this.#public(op) as unknown as JsonObject, approval: this.#approval(op) }];
      const lease = this.#lease(op, Number(body.lease_seconds ?? 60));
      return [201, { outcome: 'created', execute: true, operation: this.#public(op) as unknown as JsonObject, lease }];
    }
    const op = this.ops.get(existingId)!;
    if (op.fingerprint !== fingerprint) return err(422, 'fingerprint_mismatch', { operation_id: op.id, state: op.state });
    const pub = this.#public(op) as unknown as JsonObject;
    switch (op.state) {
      case 'awaiting_approval':
        return [202, { outcome: 'approval_required', execute: false, operation: pub, approval: this.#approval(op) }];
      case 'approved': {
        op.state = 'running';
        const lease = this.#lease(op, Number(body.lease_seconds ?? 60));
        return [200, { outcome: 'approved', execute: true, operation: this.#public(op) as unknown as JsonObject, lease, grant: op.grant as unknown as JsonObject }];
      }
      case 'denied':
        return [403, { outcome: 'denied', execute: false, operation: pub }];
      case 'running':
      case 'sent':
      case 'accepted':
        return [409, { outcome: 'in_progress', execute: false, operation: pub }, { 'retry-after': '1' }];
      case 'unknown':
        return [409, { outcome: 'unknown', execute: false, operation: pub }];
      case 'canceled': {
        // docs/retry-contract.md: the write was never made, so the same key takes a new lease.
        op.state = 'running';
        op.response = undefined;
        const lease = this.#lease(op, Number(body.lease_seconds ?? 60));
        return [201, { outcome: 'created', execute: true, operation: this.#public(op) as unknown as JsonObject, lease }];
      }
      default:
        return [200, { outcome: 'replayed', execute: false, operation: pub, response: (op.response ?? null) as JsonValue }, { 'idempotent-replayed': 'true' }];
    }
  }

  #approval(op: FakeOp): JsonObject {
    return { id: op.approvalId!, operation_id: op.id, state: 'pending', fingerprint: op.fingerprint };
  }

  #lease(op: FakeOp, seconds: number): JsonObject {
    op.leaseToken = `lt_${randomUUID()}`;
    op.leaseExpires = this.now() + seconds * 1000;
    return { token: op.leaseToken, expires_at: new Date(op.leaseExpires).toISOString() };
  }

  #event(id: string, body: JsonObject): [number, JsonValue] {
    const op = this.ops.get(id);
    if (!op) return err(404, 'not_found');
    if (body.lease_token !== op.leaseToken) return err(409, 'lease_lost');
    const type = String(body.type);
    const allowed: Record<string, string[]> = {
      heartbeat: ['running', 'sent', 'accepted'],
      sent: ['running'],
      canceled: ['running'],
      accepted: ['sent'],
      completed: ['sent', 'accepted'],
    };
    if (!allowed[type]?.includes(op.state)) return err(409, 'invalid_transition');
    this.reports.push({ id, type, body });
    if (type === 'sent') op.state = 'sent';
    if (type === 'canceled') {
      op.state = 'canceled';
      op.response = null;
    }
    if (type === 'accepted') {
      op.state = 'accepted';
      op.provider_ref = String(body.provider_ref);
    }
    if (type === 'completed') {
      op.state = body.outcome === 'failed' ? 'failed' : 'succeeded';
      op.response = body.response as unknown as StoredResponse;
    }
    return [200, { operation: this.#public(op) as unknown as JsonObject }];
  }
}

function err(status: number, code: string, extra: JsonObject = {}): [number, JsonValue] {
  return [status, { error: { code, message: code.replace(/_/g, ' '), ...extra } }];
}
