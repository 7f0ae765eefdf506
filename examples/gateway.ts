// An example gateway: agents POST their writes here instead of to the API; the gateway makes each
// one safe to retry through Gatehouse (claim, approval, lease, reports) and forwards it once.
//
// For a real deployment use `gatehouse proxy` (docs/proxy.md): the same idea as a product verb,
// with gated routes, the query-string rule, streaming, limits and its own drills. This file stays
// as a short example of a gateway written with gatehouse/client, and for its intent mode
// (`X-Gatehouse-Intent`), which the proxy does not have: there the agent keeps its own key.
//
//   node --import=tsx examples/gateway.ts --port 9200 \
//     --gatehouse http://127.0.0.1:8080 --api-key gh_… --upstream http://127.0.0.1:9100 \
//     --keys pinned-keys.json --key-store ./gateway-keys.db
//
// The agent names the operation with either
//   - an `Idempotency-Key` header (the agent keeps the key durably itself), or
//   - an `X-Gatehouse-Intent` header (e.g. `task-812:create-ticket`): the gateway keeps the
//     intent → key mapping in its durable key store.
// `X-Agent-Run-Id` is recorded as the agent run. The answer carries `Gatehouse-Outcome`
// (created, replayed, reused, in_progress, approval_required, denied, conflict, unknown) and
// `Gatehouse-Operation` headers; a replay also carries `Idempotent-Replayed: true`.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import {
  Executor,
  GatehouseClient,
  GatehouseError,
  GatehouseTransportError,
  GrantVerificationError,
  SqliteKeyStore,
  type CommandSpec,
  type ExecuteResult,
  type JsonValue,
  type PinnedKeysInput,
  type WriteFn,
} from '../src/client/index.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9200' },
    host: { type: 'string', default: '127.0.0.1' },
    gatehouse: { type: 'string', default: 'http://127.0.0.1:8080' },
    // The address people open for approval pages, if it is not --gatehouse.
    'public-url': { type: 'string' },
    'api-key': { type: 'string' },
    upstream: { type: 'string', default: 'http://127.0.0.1:9100' },
    keys: { type: 'string' },
    'trust-server-keys': { type: 'boolean', default: false },
    'key-store': { type: 'string', default: 'gateway-keys.db' },
    'lease-seconds': { type: 'string' },
    'wait-ms': { type: 'string', default: '5000' },
    'approval-wait-ms': { type: 'string', default: '0' },
    'timeout-ms': { type: 'string', default: '10000' },
    // Bytes. The body reaches Gatehouse inside the claim (method, route and agent run around it),
    // so the default is the service's own (serve --max-body, 1 MiB) less 64 KiB of room for the
    // claim, as `gatehouse proxy --max-body`'s is (docs/proxy.md, limits): at 1 MiB, a body this
    // gateway accepted could make a claim Gatehouse refuses as too large.
    'max-body': { type: 'string', default: String(1024 * 1024 - 64 * 1024) },
  },
});

const apiKey = values['api-key'] ?? process.env.GATEHOUSE_API_KEY;
if (!apiKey) {
  console.error('gateway: --api-key (or GATEHOUSE_API_KEY) with the gateway role is required');
  process.exit(2);
}
const upstream = values.upstream.replace(/\/+$/, '');
const log = (message: string, fields?: Record<string, unknown>) => console.error(`gateway: ${message}${fields ? ' ' + JSON.stringify(fields) : ''}`);

const client = new GatehouseClient({ baseUrl: values.gatehouse, publicUrl: values['public-url'], apiKey, timeoutMs: Number(values['timeout-ms']) });

let pinnedKeys: PinnedKeysInput | undefined;
if (values.keys) {
  pinnedKeys = JSON.parse(readFileSync(values.keys, 'utf8')) as PinnedKeysInput;
} else if (values['trust-server-keys']) {
  log('WARNING: trusting the signing keys the server presents now (--trust-server-keys); pin them with --keys in production');
  pinnedKeys = { keys: await client.keys() };
} else {
  log('no --keys: operations that need approval will not be executed');
}

const executor = new Executor({
  client,
  keyStore: new SqliteKeyStore(values['key-store']),
  pinnedKeys,
  inProgressWaitMs: Number(values['wait-ms']),
  approvalWaitMs: Number(values['approval-wait-ms']),
  log,
});
const leaseSeconds = values['lease-seconds'] ? Number(values['lease-seconds']) : undefined;
const maxBody = Number(values['max-body']);

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBody) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The downstream write: forward once, with the same idempotency key for APIs that honour one. */
function forward(method: string, route: string, rawBody: string): WriteFn {
  return async (ctx) => {
    const res = await fetch(upstream + route, {
      method,
      headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
      body: rawBody.length ? rawBody : undefined,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let body: JsonValue | undefined;
    try {
      body = text ? (JSON.parse(text) as JsonValue) : undefined;
    } catch {
      body = text;
    }
    const response = { status: res.status, headers: { 'content-type': res.headers.get('content-type') ?? 'application/json' }, body };
    // 5xx: the API may or may not have written. Throwing after `sent` leaves the operation to
    // become unknown for a reconciler, instead of guessing.
    if (res.status >= 500) throw new Error(`upstream answered ${res.status}`);
    if (res.status >= 400) return { ok: false, response }; // a known business failure
    const id = body && typeof body === 'object' && !Array.isArray(body) && typeof body.id === 'string' ? body.id : undefined;
    return { ok: true, response, provider_ref: id };
  };
}

function answer(res: ServerResponse, r: ExecuteResult) {
  const h: Record<string, string> = { 'gatehouse-outcome': r.kind, 'idempotency-key': r.idempotencyKey };
  if ('operation' in r && r.operation) h['gatehouse-operation'] = r.operation.id;
  switch (r.kind) {
    case 'created':
      return send(res, r.response.status, r.response.body, h);
    case 'replayed':
      h['idempotent-replayed'] = 'true';
      if (r.state === 'canceled') return send(res, 409, { outcome: 'canceled', operation_id: r.operation.id, message: 'the write was not made; use a new key to try again' }, h);
      if (!r.response) return send(res, 200, { outcome: 'replayed', state: r.state, operation_id: r.operation.id }, h);
      return send(res, r.response.status, r.response.body, h);
    case 'reused':
      if (!r.response) return send(res, 409, { outcome: 'reused', operation_id: r.operation.id, state: r.operation.state }, { ...h, 'retry-after': '1' });
      return send(res, r.response.status, r.response.body, h);
    case 'in_progress':
      return send(res, 409, { outcome: 'in_progress', operation_id: r.operation.id }, { ...h, 'retry-after': String(r.retryAfterSeconds ?? 1) });
    case 'approval_required':
      return send(res, 202, { outcome: 'approval_required', operation_id: r.operation.id, approval_id: r.approvalId, approval_url: r.approvalUrl }, { ...h, 'retry-after': '5' });
    case 'denied':
      return send(res, 403, { outcome: 'denied', operation_id: r.operation.id }, h);
    case 'conflict':
      return send(res, r.code === 'fingerprint_mismatch' ? 422 : 409, { error: { code: r.code, message: r.message, operation_id: r.operationId ?? null } }, h);
    case 'unknown':
      return send(res, 409, { outcome: 'unknown', operation_id: r.operation?.id ?? null, message: 'the write may or may not have happened; it will not be retried' }, h);
  }
}

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (req.method === 'GET' && url.pathname === '/healthz') return send(res, 200, { ok: true });
    const method = (req.method ?? 'GET').toUpperCase();
    if (method === 'GET' || method === 'HEAD') return send(res, 405, { error: { code: 'method_not_allowed', message: 'the gateway forwards writes only' } });
    const rawBody = await readBody(req);
    if (rawBody === null) return send(res, 413, { error: { code: 'payload_too_large', message: 'body over the limit' } });
    let command: JsonValue = null;
    if (rawBody.length) {
      try {
        command = JSON.parse(rawBody) as JsonValue;
      } catch {
        return send(res, 400, { error: { code: 'invalid_json', message: 'the body is not JSON' } });
      }
    }
    const spec: CommandSpec = { method, route: url.pathname, command, lease_seconds: leaseSeconds };
    const runId = header(req, 'x-agent-run-id');
    if (runId) spec.agent_run_id = runId;
    const key = header(req, 'idempotency-key');
    const intent = header(req, 'x-gatehouse-intent');
    const write = forward(method, url.pathname, rawBody);
    let result: ExecuteResult;
    if (key !== undefined) result = await executor.executeWithKey(key, spec, write);
    else if (intent) result = await executor.execute(intent, spec, write);
    else return send(res, 400, { error: { code: 'idempotency_key_missing', message: 'send an Idempotency-Key or X-Gatehouse-Intent header' } });
    answer(res, result);
  } catch (err) {
    if (err instanceof GatehouseError) return send(res, err.status >= 500 ? 502 : err.status, { error: { code: err.code, message: err.message, ...err.extra } });
    if (err instanceof GatehouseTransportError) return send(res, 503, { error: { code: 'gatehouse_unavailable', message: err.message } }, { 'retry-after': '2' });
    if (err instanceof GrantVerificationError) return send(res, 502, { error: { code: 'grant_invalid', message: err.message } });
    log('internal error', { error: (err as Error).message });
    send(res, 500, { error: { code: 'internal', message: 'gateway error' } });
  }
});

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : values.port;
  console.log(`gateway listening on http://${values.host}:${port}`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    server.close(() => {
      executor.keyStore.close();
      process.exit(0);
    });
  });
}
