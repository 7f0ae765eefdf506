// The one way a ceiling server (bare-koa.ts, durable-koa.ts) is started: `--host`/`--port` as
// `gatehouse serve` takes them, its keep-alive, the `<name> listening on <url>` line
// http-claims.ts waits for, and a clean stop on SIGTERM.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import type Koa from 'koa';

export function serveCeiling(name: string, app: Koa, onStop: () => void = () => undefined): void {
  const { values } = parseArgs({ options: { host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '0' } } });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  server.listen(Number(values.port), values.host, () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${name} listening on http://${values.host}:${port}\n`);
  });
  process.once('SIGTERM', () => server.close(() => {
    onStop();
    process.exit(0);
  }));
}
