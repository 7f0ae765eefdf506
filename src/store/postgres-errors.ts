import { StoreUnavailableError } from './store.js';

/** Serialization failure and deadlock: the transaction was rolled back and may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);

export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

/** Class 08 (connection exception), the server shutting down, or the socket gone under the driver. */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')) return true;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH') return true;
  return typeof message === 'string' && /Connection terminated|not queryable|timeout exceeded when trying to connect|Client was closed/i.test(message);
}

/** A statement the server cancelled for running past statement_timeout, or one the driver gave up on. */
export function isTimeout(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return code === '57014' || (typeof message === 'string' && /Query read timeout/i.test(message));
}

/** What a caller is told when a unit finally fails: an outage as store_unavailable, anything else as it was. */
export function reportedError(error: unknown): unknown {
  return isConnectionLoss(error) || isTimeout(error) ? new StoreUnavailableError(error) : error;
}

/** A short random pause before running again, longer after a lost connection (the server may be restarting). */
export function retryPause(attempt: number, connectionLost: boolean): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt + (connectionLost ? 50 * attempt : 0)));
}
