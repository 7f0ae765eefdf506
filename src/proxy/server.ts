// `gatehouse proxy`: an HTTP server in front of one upstream API. Gated requests go through the
// claim (gated.ts); the others are streamed through untouched.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Executor, GatehouseClient, MemoryKeyStore } from '../client/index.js';
import { ProxyError, sendError } from './errors.js';
import { handleGated } from './gated.js';
import { recordedRoute } from './command.js';
import type { ProxyOptions } from './options.js';
import { Upstream } from './upstream.js';

export interface RunningProxy {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

export async function startProxy(options: ProxyOptions, listen: { host: string; port: number }): Promise<RunningProxy> {
  const client = new GatehouseClient({ baseUrl: options.gatehouse, publicUrl: options.publicUrl, apiKey: options.apiKey });
  const executor = new Executor({
    client,
    // Callers bring their own Idempotency-Key: the proxy keeps no intents of its own.
    keyStore: new MemoryKeyStore(),
    pinnedKeys: options.pinnedKeys,
    // One extra claim when Gatehouse does not answer; after that the caller hears 503 and retries.
    claimAttempts: 2,
    log: options.log,
  });
  const upstream = new Upstream(options.upstream, { timeoutMs: options.timeoutMs, maxResponseBytes: options.maxResponseBytes });
  const deps = { executor, upstream, leaseSeconds: options.leaseSeconds, maxBodyBytes: options.maxBodyBytes, log: options.log };

  // Checked each second, headersTimeout holds to within one (Node's default check is every 30 s).
  const server = http.createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (error instanceof ProxyError) return sendError(res, error);
      options.log('internal error', { error: error instanceof Error ? error.stack ?? error.message : String(error) });
      sendError(res, new ProxyError('internal', 'the proxy failed; nothing more is known about this request'));
    });
  });
  // Agents keep their connections: a write does not pay for a handshake.
  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 35_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const path = url.split('?', 1)[0]!;
    const recorded = recordedRoute(path);
    if (!options.gate.isGated(req.method ?? 'GET', recorded?.route ?? path, recorded !== null)) {
      return upstream.passThrough(req, res, (error) => {
        sendError(res, new ProxyError('upstream_unavailable', `the upstream could not be reached: ${error.message}`));
      });
    }
    const body = await readBody(req, res, options.maxBodyBytes, options.log);
    if (body === null) return;
    await handleGated(deps, req, res, body, recorded);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    server,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      upstream.close();
      client.close();
    }),
  };
}

/**
 * The body of a gated request, at most `maxBytes` (declared or streamed). Over the limit the
 * caller gets 413 at once, while the rest is read and dropped, so it sees an answer, not a reset.
 * Null when there is nothing to claim: the body was refused, or the client left in the middle.
 */
function readBody(req: IncomingMessage, res: ServerResponse, maxBytes: number, log: ProxyOptions['log']): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (body: Buffer | null) => {
      settled = true;
      resolve(body);
    };
    const refuse = () => {
      sendError(res, new ProxyError('payload_too_large', `the request body exceeds ${maxBytes} bytes; send a smaller body`));
      req.removeAllListeners('data');
      // Read and drop the rest: closing or destroying the connection now would reset it under a
      // client still sending, before it read the 413.
      req.resume();
      settle(null);
    };
    // A client that leaves mid-body (node reports it as an "aborted" error, then a close) is no
    // bug of the proxy's: nothing to claim, nobody to answer, one short line for the operator.
    const left = () => {
      if (settled) return;
      log('a client left before its request body was complete; nothing was claimed', { method: req.method, path: (req.url ?? '/').split('?', 1)[0] });
      settle(null);
    };
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > maxBytes) return refuse();
    const chunks: Buffer[] = [];
    let total = 0;
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) return refuse();
      chunks.push(chunk);
    });
    req.once('end', () => settle(Buffer.concat(chunks, total)));
    req.once('error', (error) => (req.complete ? reject(error) : left()));
    req.once('close', () => {
      if (!req.complete) left();
    });
  });
}
