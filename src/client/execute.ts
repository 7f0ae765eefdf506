// execute(intent, spec, write): the retry contract as a library.
//
// 1. The intent's idempotency key is created in a durable store before the first request, and the
//    same intent always gets the same key. A new intent (a person asking on purpose for a second,
//    separate write) gets a new key.
// 2. Claim. On a timeout or a dropped connection, ask for the status by key; retry only with the
//    same key; never mint a new one. An operation canceled before its write (by us or another
//    holder) is claimed again with the same key: the server gives it a new lease.
// 3. On `created` or `approved` (grant verified against pinned keys), run the write while
//    heartbeating, reporting `sent` before, `accepted` (provider_ref) and `completed` after.
// 4. Stop on a fingerprint conflict. A known business failure is completed as `failed` and is
//    replayed, never re-executed, until the task (the intent) changes.
// 5. A write that throws after `sent` is left to become `unknown`: the client never guesses.
//
// Over 300 lines on purpose: these steps are one retry loop over the same intent, key, lease and
// abort signal; split up, each step would be read without the state the others leave behind.
import type { GatehouseClient } from './client.js';
import { GatehouseError, GatehouseTransportError, GrantVerificationError } from './errors.js';
import { PinnedKeys, verifyGrant } from './grant.js';
import { SqliteKeyStore, type KeyStore } from './key-store.js';
import type { CommandSpec, ExecuteOptions, ExecuteResult, ExecutorOptions, WriteFn, WriteResult } from './execute-types.js';
import type {
  ClaimRequest,
  ClaimResponse,
  Grant,
  Lease,
  Operation,
  OperationEvent,
  StoredResponse,
} from './types.js';

type Step = { done: ExecuteResult } | { reclaim: true };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Executor {
  readonly client: GatehouseClient;
  readonly keyStore: KeyStore;
  readonly #pinned: PinnedKeys | undefined;
  readonly #opts: Required<Pick<ExecutorOptions, 'inProgressWaitMs' | 'approvalWaitMs' | 'pollIntervalMs' | 'claimAttempts' | 'reportAttempts' | 'sentMode'>>;
  readonly #log: NonNullable<ExecutorOptions['log']>;
  readonly #now: () => number;

  constructor(options: ExecutorOptions) {
    this.client = options.client;
    this.keyStore = options.keyStore ?? new SqliteKeyStore(options.keyStorePath ?? 'gatehouse-keys.db');
    this.#pinned = options.pinnedKeys === undefined ? undefined : options.pinnedKeys instanceof PinnedKeys ? options.pinnedKeys : new PinnedKeys(options.pinnedKeys);
    this.#opts = {
      inProgressWaitMs: options.inProgressWaitMs ?? 5_000,
      approvalWaitMs: options.approvalWaitMs ?? 0,
      pollIntervalMs: options.pollIntervalMs ?? 200,
      claimAttempts: options.claimAttempts ?? 4,
      reportAttempts: options.reportAttempts ?? 5,
      sentMode: options.sentMode ?? 'before_write',
    };
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? Date.now;
  }

  /** Runs `write` at most once for `intent`, whatever happens to connections and processes. */
  async execute(intent: string, spec: CommandSpec, write: WriteFn, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const key = await this.keyStore.keyFor(intent); // durable before the first request
    return this.executeWithKey(key, spec, write, options);
  }

  /** The same workflow with a key the caller keeps durably itself (a gateway forwarding an agent's key). */
  async executeWithKey(key: string, spec: CommandSpec, write: WriteFn, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const body = claimBody(spec);
    const attempts = Math.max(1, this.#opts.claimAttempts);
    let lastTransport: GatehouseTransportError | undefined;
    let reclaims = 0;
    for (let attempt = 0; attempt < attempts; ) {
      let claim: ClaimResponse;
      try {
        claim = await this.client.claim(key, body);
      } catch (err) {
        if (err instanceof GatehouseError) {
          const conflict = conflictOf(err, key);
          if (conflict) return conflict;
          throw err;
        }
        if (!(err instanceof GatehouseTransportError)) throw err;
        attempt++;
        lastTransport = err;
        this.#log('claim got no answer; asking for the status by key', { key, error: err.message });
        // The claim may have landed: ask by key before anything else, and retry only with this key.
        const step = await this.#afterLostClaim(key, options).catch((e: unknown) => {
          if (e instanceof GatehouseTransportError) return undefined;
          throw e;
        });
        if (step && 'done' in step) return step.done;
        if (attempt < attempts) await sleep(backoff(attempt));
        continue;
      }
      const step = await this.#handleClaim(key, claim, spec, write, options);
      if ('done' in step) return step.done;
      // A re-claim after a wait is the same request again, not a new attempt at reaching the server.
      if (++reclaims > 100) throw new Error('execute: too many re-claims');
    }
    throw lastTransport ?? new Error('execute: no claim attempt was made');
  }

  async #afterLostClaim(key: string, options: ExecuteOptions): Promise<Step> {
    const op = await this.client.findByKey(key);
    if (!op) return { reclaim: true }; // the claim never landed: the key is still unused
    switch (op.state) {
      case 'awaiting_approval':
      case 'approved':
      case 'canceled': // the write was never made: a claim with the same key takes a new lease (docs/retry-contract.md)
        return { reclaim: true }; // re-claiming is idempotent and answers with the approval or the lease
      default:
        return { done: await this.#settle(key, op, options) };
    }
  }

  async #handleClaim(key: string, claim: ClaimResponse, spec: CommandSpec, write: WriteFn, options: ExecuteOptions): Promise<Step> {
    const operation = claim.operation;
    switch (claim.outcome) {
      case 'created':
        return { done: await this.#run(key, operation, claim.lease, undefined, spec, write, options) };
      case 'approved': {
        if (!this.#pinned) {
          await this.#cancelQuietly(operation.id, claim.lease.token);
          throw new GrantVerificationError('an approved operation needs pinned public keys to check its grant; none were given', { operationId: operation.id });
        }
        try {
          verifyGrant(claim.grant, this.#pinned, {
            operation_id: operation.id,
            account_id: operation.account_id,
            idempotency_key: key,
            fingerprint: operation.fingerprint,
          }, this.#now());
        } catch (err) {
          // The write is not made: say so, so the operation does not linger as unknown.
          await this.#cancelQuietly(operation.id, claim.lease.token);
          if (err instanceof GrantVerificationError) throw new GrantVerificationError(err.message, { operationId: operation.id, cause: err });
          throw err;
        }
        return { done: await this.#run(key, operation, claim.lease, claim.grant, spec, write, options) };
      }
      case 'approval_required': {
        const waitMs = options.approvalWaitMs ?? this.#opts.approvalWaitMs;
        if (waitMs > 0) {
          const decided = await this.#waitWhile(operation.id, (s) => s === 'awaiting_approval', waitMs);
          if (decided && decided.state !== 'awaiting_approval') return { reclaim: true };
        }
        return {
          done: {
            kind: 'approval_required',
            idempotencyKey: key,
            approvalId: claim.approval.id,
            approvalUrl: this.client.approvalUrl(claim.approval.id),
            approval: claim.approval,
            operation,
          },
        };
      }
      case 'denied':
        return { done: { kind: 'denied', idempotencyKey: key, operation, ...(claim.approval ? { approval: claim.approval } : {}) } };
      case 'in_progress': {
        const settled = await this.#settle(key, operation, options, claim.retryAfterSeconds);
        // The holder gave up before the write (canceled): the key is not burnt, claim it again.
        if (settled.kind === 'replayed' && settled.state === 'canceled') return { reclaim: true };
        return { done: settled };
      }
      case 'unknown':
        return { done: { kind: 'unknown', idempotencyKey: key, operation } };
      case 'replayed':
        return { done: replayedOf(key, operation, claim.response) };
      case 'reused':
        return { done: { kind: 'reused', idempotencyKey: key, operation, response: claim.response ?? operation.response ?? null } };
      default: {
        const never: never = claim;
        throw new Error(`unexpected claim outcome ${JSON.stringify((never as { outcome: string }).outcome)}`);
      }
    }
  }

  /** Maps an operation read by key or id to a result, waiting (bounded) while someone holds the lease. */
  async #settle(key: string, op: Operation, options: ExecuteOptions, retryAfterSeconds?: number): Promise<ExecuteResult> {
    let current = op;
    if (isLeased(current.state)) {
      const waitMs = options.inProgressWaitMs ?? this.#opts.inProgressWaitMs;
      current = (await this.#waitWhile(current.id, isLeased, waitMs)) ?? current;
    }
    switch (current.state) {
      case 'succeeded':
      case 'failed':
      case 'canceled':
        return replayedOf(key, current, current.response ?? null);
      case 'denied':
        return { kind: 'denied', idempotencyKey: key, operation: current };
      case 'unknown':
        return { kind: 'unknown', idempotencyKey: key, operation: current };
      default:
        return { kind: 'in_progress', idempotencyKey: key, operation: current, retryAfterSeconds };
    }
  }

  /** Polls the operation while `pred(state)` holds, up to `waitMs`. Undefined if it was never read. */
  async #waitWhile(operationId: string, pred: (state: Operation['state']) => boolean, waitMs: number): Promise<Operation | undefined> {
    const deadline = this.#now() + waitMs;
    let last: Operation | undefined;
    while (this.#now() < deadline) {
      await sleep(Math.min(this.#opts.pollIntervalMs, Math.max(0, deadline - this.#now())));
      try {
        last = await this.client.getOperation(operationId);
      } catch (err) {
        if (err instanceof GatehouseTransportError) continue;
        throw err;
      }
      if (!pred(last.state)) return last;
    }
    return last;
  }

  async #run(
    key: string,
    operation: Operation,
    lease: Lease,
    grant: Grant | undefined,
    spec: CommandSpec,
    write: WriteFn,
    options: ExecuteOptions,
  ): Promise<ExecuteResult> {
    const token = lease.token;
    const untilExpiry = Math.round((Date.parse(lease.expires_at) - this.#now()) / 1000);
    const leaseSeconds = spec.lease_seconds ?? (Number.isFinite(untilExpiry) && untilExpiry > 0 ? untilExpiry : 60);
    const abort = new AbortController();
    let beating = false;
    const timer = setInterval(() => {
      if (beating) return;
      beating = true;
      this.client
        .heartbeat(operation.id, token)
        .catch((err: unknown) => {
          if (err instanceof GatehouseError && (err.code === 'lease_lost' || err.code === 'invalid_transition')) {
            this.#log('lease lost while the write runs', { operation_id: operation.id });
            abort.abort(err);
          } else {
            this.#log('heartbeat failed', { operation_id: operation.id, error: (err as Error).message });
          }
        })
        .finally(() => {
          beating = false;
        });
    }, Math.max(100, (leaseSeconds * 1000) / 3));

    let sentReported = false;
    const reportSent = async () => {
      if (sentReported) return;
      await this.#report(operation.id, { type: 'sent', lease_token: token });
      sentReported = true;
    };

    try {
      const mode = options.sentMode ?? this.#opts.sentMode;
      if (mode === 'before_write') {
        try {
          await reportSent();
        } catch (err) {
          return await this.#sentRefused(key, operation, token, err, options);
        }
      }
      let result: WriteResult;
      try {
        result = await write({ operation, idempotencyKey: key, lease, grant, signal: abort.signal, sent: reportSent });
      } catch (err) {
        if (!sentReported) {
          // The write never went downstream: say so, then let the caller see its error.
          await this.#cancelQuietly(operation.id, token);
          throw err;
        }
        // After `sent` nobody knows whether the write happened: leave it to become unknown.
        this.#log('write failed after sent; the operation will become unknown', { operation_id: operation.id, error: (err as Error)?.message });
        return { kind: 'unknown', idempotencyKey: key, operation, cause: err };
      }
      if (!isWriteResult(result)) {
        // A broken write function: it may have written. Never guess.
        return { kind: 'unknown', idempotencyKey: key, operation, cause: new TypeError('write returned neither {ok: true, response} nor {ok: false, response}') };
      }
      const outcome = result.ok ? 'succeeded' : 'failed';
      let stored = result.response;
      const complete = () => this.#report(operation.id, { type: 'completed', lease_token: token, outcome, response: stored });
      try {
        if (!sentReported) await reportSent(); // by_write mode and the write forgot: it did write
        if (result.ok && result.provider_ref) {
          await this.#report(operation.id, { type: 'accepted', lease_token: token, provider_ref: result.provider_ref });
        }
        let done: { operation: Operation };
        try {
          done = await complete();
        } catch (err) {
          // Refused as too large, nothing was recorded: the outcome is still known, so it is
          // reported again with a response that fits, when the caller has one.
          const smaller = err instanceof GatehouseError && err.code === 'payload_too_large' ? options.onResponseTooLarge?.(stored, err) : undefined;
          if (smaller === undefined) throw err;
          stored = smaller;
          done = await complete();
        }
        return { kind: 'created', idempotencyKey: key, outcome, response: stored, operation: done.operation ?? operation, ...(grant ? { grant } : {}) };
      } catch (err) {
        // The write happened but Gatehouse did not record it: look by key before saying unknown.
        const seen = await this.client.findByKey(key).catch(() => null);
        if (seen && (seen.state === 'succeeded' || seen.state === 'failed')) {
          return { kind: 'created', idempotencyKey: key, outcome: seen.state, response: stored, operation: seen, ...(grant ? { grant } : {}) };
        }
        this.#log('completed report failed; the operation will become unknown', { operation_id: operation.id, error: (err as Error)?.message });
        return { kind: 'unknown', idempotencyKey: key, operation: seen ?? operation, cause: err };
      }
    } finally {
      clearInterval(timer);
    }
  }

  /** `sent` was refused or got no answer: the write was not made. */
  async #sentRefused(key: string, operation: Operation, token: string, err: unknown, options: ExecuteOptions): Promise<ExecuteResult> {
    if (err instanceof GatehouseError && err.code === 'lease_lost') {
      // Someone else holds the operation now.
      return this.#settle(key, await this.client.getOperation(operation.id).catch(() => operation), options);
    }
    await this.#cancelQuietly(operation.id, token);
    throw err;
  }

  async #cancelQuietly(operationId: string, token: string): Promise<void> {
    try {
      await this.#report(operationId, { type: 'canceled', lease_token: token });
    } catch (err) {
      this.#log('canceled report failed; the lease will run out', { operation_id: operationId, error: (err as Error).message });
    }
  }

  /** A report, retried on transport failure only (identical reports are idempotent on the server). */
  async #report(operationId: string, event: OperationEvent): Promise<{ operation: Operation }> {
    const attempts = Math.max(1, this.#opts.reportAttempts);
    for (let i = 1; ; i++) {
      try {
        return await this.client.reportEvent(operationId, event);
      } catch (err) {
        if (!(err instanceof GatehouseTransportError) || i >= attempts) throw err;
        this.#log(`${event.type} report got no answer; retrying`, { operation_id: operationId, error: err.message });
        await sleep(backoff(i));
      }
    }
  }
}

export function createExecutor(options: ExecutorOptions): Executor {
  return new Executor(options);
}

function claimBody(spec: CommandSpec): ClaimRequest {
  const body: ClaimRequest = { method: spec.method, route: spec.route, command: spec.command };
  if (spec.agent_run_id !== undefined) body.agent_run_id = spec.agent_run_id;
  if (spec.business_key !== undefined) body.business_key = spec.business_key;
  if (spec.exclusive_scope !== undefined) body.exclusive_scope = spec.exclusive_scope;
  if (spec.lease_seconds !== undefined) body.lease_seconds = spec.lease_seconds;
  if (spec.summary !== undefined) body.summary = spec.summary;
  return body;
}

/**
 * The server names the operation in `operation_id` on both refusals (the stored operation on
 * fingerprint_mismatch, the scope's holder on scope_busy) and its `state` on fingerprint_mismatch
 * only (src/operations/claim-existing.ts, scope-holds.ts).
 */
function conflictOf(err: GatehouseError, key: string): ExecuteResult | undefined {
  if (err.code !== 'fingerprint_mismatch' && err.code !== 'scope_busy') return undefined;
  const { operation_id: operationId, state } = err.extra;
  return {
    kind: 'conflict', idempotencyKey: key, code: err.code, message: err.message,
    operationId: typeof operationId === 'string' ? operationId : undefined,
    state: typeof state === 'string' ? state : undefined,
  };
}

function replayedOf(key: string, op: Operation, response: StoredResponse | null | undefined): ExecuteResult {
  if (op.state === 'denied') return { kind: 'denied', idempotencyKey: key, operation: op };
  const state = op.state === 'failed' || op.state === 'canceled' ? op.state : 'succeeded';
  return { kind: 'replayed', idempotencyKey: key, state, response: response ?? null, operation: op };
}

function isLeased(state: Operation['state']): boolean {
  return state === 'running' || state === 'sent' || state === 'accepted';
}

function isWriteResult(r: unknown): r is WriteResult {
  if (!r || typeof r !== 'object') return false;
  const w = r as { ok?: unknown; response?: { status?: unknown } };
  return typeof w.ok === 'boolean' && !!w.response && typeof w.response.status === 'number';
}

function backoff(attempt: number): number {
  return Math.min(2_000, 100 * 2 ** (attempt - 1)) + Math.floor(Math.random() * 50);
}

