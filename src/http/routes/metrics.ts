import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../../context.js';
import type { Metrics } from '../../metrics/metrics.js';
import { principalOf } from '../auth.js';
import { requireRole } from '../../principals/roles.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { DomainError } from '../../core/errors.js';
import { httpErrorOf, INTERNAL_ERROR } from '../error-status.js';
import { writeJsonError } from '../json-error.js';

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
    if ((req.url ?? '').split('?')[0] !== '/metrics') {
      return answerError(res, new DomainError('not_found', 'this listener serves GET /metrics only'));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return answerError(res, new DomainError('method_not_allowed', `${req.method} is not allowed on /metrics`), { allow: 'GET, HEAD' });
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => {
        const { status, code, message } = INTERNAL_ERROR;
        writeJsonError(res, status, code, message);
      },
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

/** Every error is JSON (docs/http-api.md, Errors), on this bare listener as on the service port. */
function answerError(res: http.ServerResponse, error: DomainError, headers: Record<string, string> = {}): void {
  const { status, code } = httpErrorOf(error);
  writeJsonError(res, status, code, error.message, headers);
}
