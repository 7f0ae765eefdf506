import type http from 'node:http';
import type { ArrivalSignal } from '../store/store.js';

/**
 * Tells the store when the server has been accepting connections (Store.arrivals): each
 * 'connection' event sets the flag, and the store's asking clears it. A burst of new connections
 * sets it on every event-loop turn until the last is in; keep-alive traffic never sets it.
 */
export function connectionArrivals(server: http.Server): ArrivalSignal {
  let arrived = false;
  server.on('connection', () => {
    arrived = true;
  });
  return () => {
    const answer = arrived;
    arrived = false;
    return answer;
  };
}
