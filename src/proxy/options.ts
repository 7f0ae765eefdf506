// What `gatehouse proxy` is told: parsed and checked once, before anything listens.
import type { PinnedKeysInput } from '../client/index.js';
import { parseDuration as parseDurationWithin } from '../config/duration.js';
import type { RouteGate } from './routes-file.js';

export interface ProxyOptions {
  /** The API the proxy fronts, e.g. `http://127.0.0.1:9100` (a path prefix is kept). */
  upstream: URL;
  /** Gatehouse's base URL as the proxy reaches it. */
  gatehouse: string;
  /** Where people open Gatehouse's approval pages, when not `gatehouse`. */
  publicUrl?: string;
  /** A key with the `gateway` role. */
  apiKey: string;
  /** Public keys pinned at deployment; without them approved writes are refused, never forwarded unchecked. */
  pinnedKeys?: PinnedKeysInput;
  gate: RouteGate;
  /** Upstream timeout, connection and answer together. */
  timeoutMs: number;
  /** Lease asked for on each claim; heartbeats extend it every third of it while the upstream works. */
  leaseSeconds: number;
  /** Below the service's `--max-body`, with room for the claim around the body (DEFAULT_MAX_BODY). */
  maxBodyBytes: number;
  maxResponseBytes: number;
  log: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * `30s`, `500ms`, `2m`, or a plain number of seconds; above zero, no upper bound (a slow upstream
 * may need long). Zero is refused in words: the shared bounds message would print the smallest
 * double as its lower bound. A duration that rounds to 0 ms is none either.
 */
export function parseDuration(text: string): number {
  const ms = parseDurationWithin(text, { min: 0, max: Infinity });
  if (ms <= 0) throw new Error(`must be more than 0, like 30s or 500ms (not ${JSON.stringify(text)})`);
  return ms;
}

/**
 * `--max-body`'s default: the service's own default (`serve --max-body`, 1 MiB) less 64 KiB,
 * because the body reaches Gatehouse inside the claim. Around it the claim adds the method, the
 * route (at most 2 KiB), the query (the URL fits in node's 16 KiB of request headers, and JSON
 * escapes at most double it) and the agent run (at most 255 characters): far less than 64 KiB.
 */
export const DEFAULT_MAX_BODY = '960kb';
