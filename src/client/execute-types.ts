// The types of execute(intent, spec, write): what the caller hands in and every result it gets back.
import type { GatehouseClient } from './client.js';
import type { GatehouseError } from './errors.js';
import type { PinnedKeys, PinnedKeysInput } from './grant.js';
import type { KeyStore } from './key-store.js';
import type { Approval, ClaimRequest, Grant, Lease, Operation, StoredResponse } from './types.js';

/** What the gateway is about to do: the claim's body (the fingerprinted method, route and command, and options). */
export type CommandSpec = ClaimRequest;

export type WriteResult =
  /** The downstream write succeeded; `provider_ref` (e.g. a payment id) is reported as `accepted`. */
  | { ok: true; response: StoredResponse; provider_ref?: string }
  /** A known business failure: completed as `failed`, replayed to every retry. */
  | { ok: false; response: StoredResponse };

export interface WriteContext {
  operation: Operation;
  idempotencyKey: string;
  lease: Lease;
  /** The verified grant when the operation needed approval. */
  grant?: Grant;
  /** Aborted when the lease is lost (a heartbeat answered `lease_lost`). */
  signal: AbortSignal;
  /**
   * Reports `sent`. With `sentMode: 'before_write'` (the default) it was already reported before
   * `write` was called and this is a no-op. With `'by_write'`, call it right before the request goes
   * downstream: a write that throws before calling it is reported `canceled`.
   */
  sent(): Promise<void>;
}

export type WriteFn = (ctx: WriteContext) => Promise<WriteResult>;

interface ResultBase {
  idempotencyKey: string;
}

export type ExecuteResult =
  /**
   * This call ran the write. `outcome` is `failed` for a known business failure; `grant` is the
   * verified grant it ran under when the operation needed approval (the claim was `approved`);
   * `response` is the one stored (`onResponseTooLarge`'s when the write's own was too large).
   */
  | (ResultBase & { kind: 'created'; outcome: 'succeeded' | 'failed'; response: StoredResponse; operation: Operation; grant?: Grant })
  /** An earlier attempt finished: its stored response (null for a canceled operation). */
  | (ResultBase & { kind: 'replayed'; state: 'succeeded' | 'failed' | 'canceled'; response: StoredResponse | null; operation: Operation })
  /** Another key already did this (same `business_key`): the existing operation. */
  | (ResultBase & { kind: 'reused'; response: StoredResponse | null; operation: Operation })
  /** Someone holds the lease and did not finish within the bounded wait. Ask again later, same intent. */
  | (ResultBase & { kind: 'in_progress'; operation: Operation; retryAfterSeconds?: number })
  /** A person must approve first: show them `approvalUrl`, then call execute again with the same intent. */
  | (ResultBase & { kind: 'approval_required'; approvalId: string; approvalUrl: string; approval: Approval; operation: Operation })
  /** A person said no; `approval` (who decided, and why) when the claim's answer carried it. */
  | (ResultBase & { kind: 'denied'; operation: Operation; approval?: Approval })
  /** The key was used for another command (`fingerprint_mismatch`), or the exclusive scope is held (`scope_busy`). Do not retry blindly. */
  | (ResultBase & { kind: 'conflict'; code: 'fingerprint_mismatch' | 'scope_busy'; message: string; operationId?: string; state?: string })
  /** The write may or may not have happened. Never re-executed by a retry; a reconciler resolves it. */
  | (ResultBase & { kind: 'unknown'; operation?: Operation; cause?: unknown });

export type ExecuteKind = ExecuteResult['kind'];

export interface ExecuteOptions {
  /** When `sent` is reported (default: the executor's, itself `before_write` by default). */
  sentMode?: 'before_write' | 'by_write';
  /** Bounded wait for someone else's lease to finish (default: the executor's). */
  inProgressWaitMs?: number;
  /** Bounded wait for a pending approval to be decided (default: the executor's). */
  approvalWaitMs?: number;
  /**
   * Gatehouse refused the `completed` report as too large (413 `payload_too_large`): the response
   * to store instead, reported once more with the same outcome (e.g. without its body, marked so).
   * Without it, or when it answers undefined, the operation is left to become `unknown`, although
   * the write's outcome is known.
   */
  onResponseTooLarge?: (response: StoredResponse, refusal: GatehouseError) => StoredResponse | undefined;
}

export interface ExecutorOptions {
  client: GatehouseClient;
  /** Durable intent → key store. Default: a SQLite file at `keyStorePath`. */
  keyStore?: KeyStore;
  keyStorePath?: string;
  /** Public keys that may sign grants (what `GET /v1/keys` returned when the gateway was deployed). */
  pinnedKeys?: PinnedKeysInput | PinnedKeys;
  /** Default 5 000 ms. */
  inProgressWaitMs?: number;
  /** Default 0: return `approval_required` at once. */
  approvalWaitMs?: number;
  /** Poll interval while waiting (default 200 ms). */
  pollIntervalMs?: number;
  /** Claims sent for one execute when the connection fails (default 4). */
  claimAttempts?: number;
  /** Tries of one report (they are idempotent on the server) when the connection fails (default 5). */
  reportAttempts?: number;
  sentMode?: 'before_write' | 'by_write';
  /** Diagnostics (stderr in the examples). */
  log?: (message: string, fields?: Record<string, unknown>) => void;
  now?: () => number;
}
