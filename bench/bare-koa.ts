// The ceiling for the HTTP benchmarks: a Koa server that answers `{}` to every request and does
// nothing else, run as a child process exactly like `gatehouse serve` so the two are comparable.
//
//   node --import=tsx bench/bare-koa.ts [--host 127.0.0.1] [--port 0]
import Koa from 'koa';
import { serveCeiling } from './ceiling-server.js';

const app = new Koa();
app.use((ctx) => {
  ctx.body = {};
});
serveCeiling('bare koa', app);
