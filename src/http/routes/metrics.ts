import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../../context.js';
import type { Metrics } from '../../metrics/metrics.js';
import { principalOf } from '../auth.js';
import { requireRole } from '../../principals/roles.js';
import { newRouter, type RouteModule } from '../route-module.js';

/** `GET /metrics` on the service port, for admins: it names accounts and rates. */
export function metricsRoutes(deps: Pick<AppContext, 'metrics'>): RouteModule {
  const router = newRouter();
  router.get('/metrics', async (ctx) => {
    requireRole(principalOf(ctx), 'admin');
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });
  return { router };
}

/**
 * `serve --metrics-host/--metrics-port`: the same text without a key, on a listener of its own,
 * for a scraper on the machine or a private network (bind it to loopback unless that is what you want).
 */
export async function startMetricsListener(metrics: Metrics, host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => res.writeHead(503, { 'content-type': 'text/plain' }).end('metrics could not be read\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${shown}:${address.port}/metrics`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
