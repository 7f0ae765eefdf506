import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** Resolves once `n` deliveries arrived. */
  until(n: number): Promise<void>;
  close(): Promise<void>;
}

/** A chat tool's endpoint on loopback (on `port`, or any free one): records each delivery and answers 204. */
export async function startReceiver(port = 0): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.statusCode = 204;
      res.end();
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    until: async (n) => {
      while (received.length < n) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
        });
      }
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
