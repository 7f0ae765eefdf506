/**
 * The witness's HTTP face (C2SP tlog-witness): `POST /add-checkpoint`, and the monitoring read
 * `GET /<sha256 hex of origin>/checkpoint` (the latest checkpoint it cosigned, with its
 * cosignature). Plain node:http: two routes, text bodies, nothing for a framework to do.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { addCheckpoint, originHash, type WitnessDeps, type WitnessResponse } from './add-checkpoint.js';

/** A checkpoint with a 63-hash proof and a hundred signatures is well under this. */
const MAX_BODY_BYTES = 64 * 1024;

export interface RunningWitness {
  url: string;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, { status, contentType, body }: WitnessResponse): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function readBody(req: http.IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  const text = bytes.toString('utf8');
  // Not UTF-8: a signed note must be, and a replacement character would change what is signed.
  return Buffer.from(text, 'utf8').equals(bytes) ? text : '';
}

export function handle(deps: WitnessDeps): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  const plain = (status: number, body: string): WitnessResponse => ({ status, contentType: 'text/plain; charset=utf-8', body });
  return async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/add-checkpoint') {
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        return send(res, plain(405, 'use POST\n'));
      }
      const body = await readBody(req);
      if (body === null) return send(res, plain(413, 'request body too large\n'));
      return send(res, addCheckpoint(body, deps));
    }
    const monitor = /^\/([0-9a-f]{64})\/checkpoint$/.exec(path);
    if (monitor && (req.method === 'GET' || req.method === 'HEAD')) {
      const stored = deps.store.byOriginHash(monitor[1]!, originHash);
      return send(res, stored === null ? plain(404, 'no checkpoint cosigned for this log\n') : plain(200, stored.note));
    }
    send(res, plain(404, 'not found\n'));
  };
}

export async function startWitnessServer(deps: WitnessDeps, host: string, port: number): Promise<RunningWitness> {
  const handler = handle(deps);
  const server = http.createServer((req, res) => {
    handler(req, res).catch(() => {
      if (!res.headersSent) send(res, { status: 500, contentType: 'text/plain; charset=utf-8', body: 'internal error\n' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
