// The floor of this design behind HTTP: bench/lean-claims.ts (a new-key claim's durable work and
// nothing else, a lease holder's report's, and a replay's) behind the same Koa as the product, with
// the body parsed as strictly, on the product's two routes: POST /v1/operations (a claim; under a
// key whose operation completed through this process, a replay, as the product answers it) and
// POST /v1/operations/{id}/events (a `sent` or `completed` report). Beside them, the floor of the
// HTTP edge: POST /v1/fingerprint, the body read and parsed as strictly and the fingerprint
// computed, with no store work, as the product's route of that name.
// Run as a child process by bench/http-claims.ts, next to the product and the ceilings.
//
//   node --import=tsx bench/lean-claim.ts [--host 127.0.0.1] [--port 0]
import Koa from 'koa';
import type { JsonValue } from '../src/core/json.js';
import { fingerprint } from '../src/core/fingerprint.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import { serveCeiling } from './ceiling-server.js';
import { openLeanClaims, type LeanReport } from './lean-claims.js';

const REPORT_PATH = /^\/v1\/operations\/([^/]+)\/events$/;

const lean = await openLeanClaims();
const app = new Koa();
app.use(async (ctx) => {
  const report = REPORT_PATH.exec(ctx.path);
  const edge = ctx.path === '/v1/fingerprint';
  if (ctx.method !== 'POST' || (ctx.path !== '/v1/operations' && !report && !edge)) ctx.throw(404);
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const body = parseStrictJson(Buffer.concat(chunks), { maxDepth: 65 }) as Record<string, JsonValue>;
  // The account the request's API key would name in the product: the load sends it in plain.
  const account = ctx.get('x-bench-account') || undefined;
  if (edge) {
    const { method, route, command } = body as { method: string; route: string; command: JsonValue };
    ctx.body = { fingerprint: fingerprint({ account_id: account ?? 'acme', method, route, command }) };
    return;
  }
  if (report) {
    ctx.body = await lean.report(decodeURIComponent(report[1]!), body as unknown as LeanReport, account);
    ctx.status = 200;
    return;
  }
  const key = ctx.get('idempotency-key');
  if (!key) ctx.throw(400, 'idempotency key missing');
  if (lean.completed(key, account)) {
    ctx.body = await lean.replay(key, body, account);
    ctx.status = 200;
  } else {
    ctx.body = await lean.claim(key, body, account);
    ctx.status = 201;
  }
});
serveCeiling('lean claim', app, () => lean.close());
