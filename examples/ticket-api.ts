// A tiny downstream API that the example gateway writes to, and that the drills count.
//
//   node --import=tsx examples/ticket-api.ts --port 9100
//
// POST /<anything> creates one item whose kind is the last path segment (`/tickets`,
// `/alerts/A1/tickets` → ticket, `/deploys` → deploy) and answers 201 with it. Command members the
// API understands: `delay_ms` (answer that much later: the item exists already), `fail: true` (a
// business failure: 422, nothing created). GET /tickets (or /deploys, …) answers
// `{"count": N, "items": [...]}`; `?tag=T` counts only items whose command had `"tag": T`.
// It is deliberately not idempotent itself: every POST that arrives makes a new item.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9100' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});

interface Item {
  id: string;
  kind: string;
  path: string;
  created_at: string;
  idempotency_key: string | null;
  [member: string]: unknown;
}

const items: Item[] = [];
let next = 1;

function kindOf(path: string): string {
  const last = path.split('/').filter(Boolean).at(-1) ?? 'items';
  return last.endsWith('s') ? last.slice(0, -1) : last;
}

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/healthz') return send(res, 200, { ok: true });
    if (req.method === 'GET') {
      const kind = kindOf(url.pathname);
      const tag = url.searchParams.get('tag');
      const selected = items.filter((i) => i.kind === kind && (tag === null || i.tag === tag));
      return send(res, 200, { count: selected.length, items: selected });
    }
    if (req.method !== 'POST') return send(res, 405, { error: 'method not allowed' });
    const text = await readBody(req);
    let command: Record<string, unknown> = {};
    if (text) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) command = parsed as Record<string, unknown>;
      } catch {
        return send(res, 400, { error: 'invalid json' });
      }
    }
    if (command.fail === true) return send(res, 422, { error: 'rejected by the ticket API', reason: command.reason ?? null });
    const item: Item = {
      ...command,
      id: `${kindOf(url.pathname)}_${next++}`,
      kind: kindOf(url.pathname),
      path: url.pathname,
      created_at: new Date().toISOString(),
      idempotency_key: (req.headers['idempotency-key'] as string | undefined) ?? null,
    };
    items.push(item);
    const delay = Number(command.delay_ms ?? 0);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    send(res, 201, item);
  } catch (err) {
    send(res, 500, { error: (err as Error).message });
  }
});

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : values.port;
  console.log(`ticket api listening on http://${values.host}:${port}`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
