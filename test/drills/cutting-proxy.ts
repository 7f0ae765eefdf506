// An HTTP proxy that can lose answers: for a request it was told to cut, it forwards the whole
// request upstream, waits for the upstream's whole answer (so the upstream has acted), and then
// destroys the client's connection without sending a byte. The client sees a dropped connection
// after the server completed — the field's "lost response".
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';

export interface CutRule {
  match: (req: { method: string; path: string; body: string }) => boolean;
  times: number;
}

export class CuttingProxy {
  readonly target: URL;
  readonly #server: Server;
  readonly #rules: CutRule[] = [];
  cuts = 0;
  forwarded = 0;
  url = '';

  constructor(target: string) {
    this.target = new URL(target);
    this.#server = createServer(async (req, res) => {
      const body = await readAll(req);
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const rule = this.#rules.find((r) => r.times > 0 && r.match({ method, path, body: body.toString('utf8') }));
      if (rule) rule.times--;
      const headers = { ...req.headers, host: this.target.host };
      const up = httpRequest(
        { hostname: this.target.hostname, port: this.target.port, method, path, headers },
        async (upRes) => {
          const upBody = await readAll(upRes);
          this.forwarded++;
          if (rule) {
            this.cuts++;
            // The upstream answered in full; the client gets nothing but a reset.
            req.socket.destroy();
            return;
          }
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          res.end(upBody);
        },
      );
      up.on('error', (err) => {
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'bad_gateway', message: err.message } }));
        }
      });
      up.end(body);
    });
    this.#server.keepAliveTimeout = 1_000;
  }

  /** Cut the answers of the next `times` requests that `match`. */
  cut(match: CutRule['match'], times = 1): void {
    this.#rules.push({ match, times });
  }

  listen(): Promise<string> {
    return new Promise((resolve) => {
      this.#server.listen(0, '127.0.0.1', () => {
        const address = this.#server.address();
        this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
        resolve(this.url);
      });
    });
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
