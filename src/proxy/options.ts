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
  maxBodyBytes: number;
  maxResponseBytes: number;
  log: (message: string, fields?: Record<string, unknown>) => void;
}

/** `30s`, `500ms`, `2m`, or a plain number of seconds; above zero, no upper bound (a slow upstream may need long). */
export function parseDuration(text: string): number {
  return parseDurationWithin(text, { min: Number.MIN_VALUE, max: Infinity });
}
