// The ceiling for the HTTP benchmarks: a Koa server that answers `{}` to every request and does
// nothing else, run as a child process exactly like `gatehouse serve` so the two are comparable.
//
//   node --import=tsx bench/bare-koa.ts [--host 127.0.0.1] [--port 0]
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import Koa from 'koa';

const { values } = parseArgs({ options: { host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '0' } } });
const app = new Koa();
app.use((ctx) => {
  ctx.body = {};
});
const server = http.createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), values.host, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`bare koa listening on http://${values.host}:${port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
