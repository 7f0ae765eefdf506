import type http from 'node:http';
import type { Socket } from 'node:net';
import { RETRY_AFTER_SECONDS } from './error-status.js';
import { writeJsonError } from './json-error.js';

/**
 * A bound on open connections, kept below the process's descriptor limit. Idle keep-alive
 * connections are what a crowd of quiet clients holds, so when a new connection passes the
 * bound the idle ones are closed (their clients reconnect when they next have a request). A
 * request that arrives while the count is still past the bound is answered `503 overloaded`
 * with Retry-After and its connection closed — an answer, not a reset. Past a hard ceiling a
 * quarter above the bound, Node drops new connections at once (`server.maxConnections`), so
 * the descriptors the store and the log need are never taken.
 */
export function limitConnections(server: http.Server, max: number): { overBound(): boolean; readonly open: number } {
  let open = 0;
  let lastIdleSweep = -Infinity;
  server.maxConnections = max + Math.max(16, Math.ceil(max / 4));
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
    if (open > max && performance.now() - lastIdleSweep > 100) {
      lastIdleSweep = performance.now();
      server.closeIdleConnections();
    }
  });
  return {
    overBound: () => open > max,
    get open() {
      return open;
    },
  };
}

/** The answer to a request on a connection past the bound: nothing of it is read. */
export function refuseOverConnectionBound(res: http.ServerResponse): void {
  writeJsonError(res, 503, 'overloaded', 'the service is at its bound on open connections; retry after the Retry-After delay',
    { 'retry-after': String(RETRY_AFTER_SECONDS), connection: 'close' });
}
