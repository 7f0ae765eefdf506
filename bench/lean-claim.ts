// The floor of this design behind HTTP: bench/lean-claims.ts (a new-key claim's durable work and
// nothing else, and a replay's) behind the same Koa as the product, with the body parsed as
// strictly. A claim under a key this process completed is a replay, as the product answers it;
// POST /bench/completed ends a claimed operation (setting up the replay load, not measured).
// Run as a child process by bench/http-claims.ts, next to the product and the ceilings.
//
//   node --import=tsx bench/lean-claim.ts [--host 127.0.0.1] [--port 0]
import Koa from 'koa';
import type { JsonValue } from '../src/core/json.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import { serveCeiling } from './ceiling-server.js';
import { openLeanClaims } from './lean-claims.js';

const lean = await openLeanClaims();
const app = new Koa();
app.use(async (ctx) => {
  const setup = ctx.path === '/bench/completed';
  if (ctx.method !== 'POST' || (ctx.path !== '/v1/operations' && !setup)) ctx.throw(404);
  const key = ctx.get('idempotency-key');
  if (!key) ctx.throw(400, 'idempotency key missing');
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const body = parseStrictJson(Buffer.concat(chunks), { maxDepth: 65 }) as Record<string, JsonValue>;
  // The account the request's API key would name in the product: the load sends it in plain.
  const account = ctx.get('x-bench-account') || undefined;
  if (setup) {
    await lean.complete(key, body, account);
    ctx.status = 204;
  } else if (lean.completed(key, account)) {
    ctx.body = await lean.replay(key, body, account);
    ctx.status = 200;
  } else {
    ctx.body = await lean.claim(key, body, account);
    ctx.status = 201;
  }
});
serveCeiling('lean claim', app, () => lean.close());
