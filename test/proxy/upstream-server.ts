// The API the proxy tests put Gatehouse in front of: its own process, so a test can kill it.
// It is deliberately not idempotent: every write that arrives is recorded and makes a new item.
//
//   node --import=tsx test/proxy/upstream-server.ts --port N
//
// Behaviour by the first path segment: /hang never answers, /reset drops the connection after
// reading the request, /error answers 500, /refuse answers 422, /redirect answers 303,
// /no-content 204 and /not-modified 304 (both without a body or Content-Length), /big
// answers 201 (or `x-status`) with `x-size` bytes of `x-fill` (text, binary or control, below);
// /switch answers a bare `101` (no Upgrade) and /switch-upgrade a `101` with one, then nothing;
// /cut sends `200`, `Content-Length: 100` and 11 bytes, then drops the connection; /cut-chunked
// the same with a chunked answer; /stall sends those 11 bytes and then nothing more; /huge
// answers 201 with a chunked JSON body of `x-size` bytes (no Content-Length, written in pieces),
// pausing `x-pause-ms` once `x-pause-at` bytes are out, or dropping the connection once
// `x-reset-at` bytes are; any other write answers 201 with a new item. `x-delay-ms` delays the
// answer. GET /_requests lists what arrived (not recorded itself); other GETs echo the request.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const seen: Seen[] = [];
let next = 1;

/** What /big answers its `x-size` bytes with, by `x-fill`: text stored as it is, bytes that are not UTF-8, or text JSON escapes six times over. */
const BIG_FILLS: Record<string, { byte: number; type: string }> = {
  text: { byte: 0x61, type: 'text/plain' },
  binary: { byte: 0xff, type: 'application/octet-stream' },
  control: { byte: 0x01, type: 'text/plain' },
};

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  const url = new URL(req.url ?? '/', 'http://upstream');
  if (url.pathname === '/_requests') return send(res, 200, seen);
  seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
  const delay = Number(req.headers['x-delay-ms'] ?? 0);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  const first = url.pathname.split('/')[1];
  if (req.method === 'GET' || req.method === 'HEAD') {
    return send(res, 200, { echo: { method: req.method, url: req.url, headers: req.headers } }, {
      'x-upstream': 'yes', connection: 'keep-alive, x-hop-secret', 'x-hop-secret': 'must not reach the client',
    });
  }
  switch (first) {
    case 'hang':
      return; // never answers: the test kills someone
    case 'reset':
      return req.socket.destroy();
    case 'error':
      return send(res, 500, { error: 'the database is on fire' });
    case 'refuse':
      return send(res, 422, { error: 'invalid_title', detail: 'titles must not be empty' });
    case 'redirect':
      res.writeHead(303, { location: '/items/1', 'content-length': '0' });
      return res.end();
    case 'no-content':
      res.writeHead(204, { etag: '"v2"' });
      return res.end();
    case 'not-modified':
      res.writeHead(304, { etag: '"v1"' });
      return res.end();
    case 'big': {
      const size = Number(req.headers['x-size'] ?? 0);
      const fill = BIG_FILLS[String(req.headers['x-fill'] ?? 'text')] ?? BIG_FILLS.text!;
      res.writeHead(Number(req.headers['x-status'] ?? 201), { 'content-type': fill.type, 'content-length': String(size), location: '/items/big', etag: `"big-${size}"` });
      return res.end(Buffer.alloc(size, fill.byte));
    }
    case 'switch':
    case 'switch-upgrade':
      // Written on the socket: node's server would not send a 101 nobody asked for.
      return void req.socket.write(`HTTP/1.1 101 Switching Protocols\r\n${first === 'switch' ? '' : 'Upgrade: x-other\r\nConnection: upgrade\r\n'}\r\n`);
    case 'cut':
    case 'cut-chunked':
    case 'stall': {
      res.writeHead(200, { 'content-type': 'application/json', ...(first === 'cut-chunked' ? {} : { 'content-length': '100' }) });
      res.write('{"id": "it');
      if (first === 'stall') return; // the test kills someone
      // Let the headers and the first bytes reach the proxy before the connection goes.
      return void setTimeout(() => req.socket.destroy(), 100);
    }
    case 'huge': {
      const size = Number(req.headers['x-size'] ?? 0);
      const pauseAt = Number(req.headers['x-pause-at'] ?? Infinity);
      const resetAt = Number(req.headers['x-reset-at'] ?? Infinity);
      res.writeHead(201, { 'content-type': 'application/json' });
      const piece = 64 * 1024;
      res.write('{"pad": "');
      let paused = false;
      for (let written = 11; written < size; written += piece) {
        if (written >= resetAt) {
          // Let the bytes written so far reach the proxy before the connection goes.
          return void setTimeout(() => req.socket.destroy(), 300);
        }
        if (written >= pauseAt && !paused) {
          paused = true;
          await new Promise((r) => setTimeout(r, Number(req.headers['x-pause-ms'] ?? 0)));
        }
        res.write('a'.repeat(Math.min(piece, size - written)));
      }
      return void res.end('"}');
    }
    default: {
      const id = `item_${next++}`;
      return send(res, 201, { id, path: url.pathname, query: url.search, received: body ? JSON.parse(body) : null }, {
        location: `/items/${id}`, 'set-cookie': 'session=upstream-secret',
      });
    }
  }
});

server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : values.port;
  console.log(`upstream listening on http://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => process.exit(0));
