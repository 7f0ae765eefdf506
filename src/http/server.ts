import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../context.js';
import { createApp, type HttpOptions } from './app.js';
import { DEFAULT_LIMITS } from './limits.js';
import { limitConnections, refuseOverConnectionBound } from './connection-limit.js';
import { connectionArrivals } from './connection-arrivals.js';
import { answerClientErrors } from './client-error.js';
import { RateLimitedLog } from '../core/rate-limited-log.js';
import { healthRoutes } from './routes/health.js';
import { openapiRoutes } from './routes/openapi.js';
import { ledgerRoutes } from './routes/audit.js';
import { proofRoutes } from './routes/proofs.js';
import { principalRoutes } from './routes/principals.js';
import { fingerprintRoutes } from './routes/fingerprint.js';
import { operationRoutes } from './routes/operations.js';
import { approvalRoutes } from './routes/approvals.js';
import { reviewRoutes } from './routes/review.js';
import { uiRoutes } from './pages/routes.js';
import type { RouteModule } from './route-module.js';
import { metricsRoutes, startMetricsListener } from './routes/metrics.js';

export interface ServeOptions extends HttpOptions {
  host: string;
  port: number;
  /** An unauthenticated listener for `GET /metrics` only (serve --metrics-host/--metrics-port). */
  metrics?: { host: string; port: number };
}

export interface RunningServer {
  url: string;
  /** The unauthenticated metrics listener's URL, when one was asked for. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

/** Every domain's routes, in one list so the OpenAPI test can walk them all. */
export function routeModules(context: AppContext): RouteModule[] {
  return [healthRoutes(context), openapiRoutes(), ledgerRoutes(context), proofRoutes(context), principalRoutes(context), fingerprintRoutes(context), operationRoutes(context),
    approvalRoutes(context), reviewRoutes(context), uiRoutes(context), metricsRoutes(context)];
}

const CHECKPOINT_INTERVAL_MS = 10_000;

/** Serves HTTP and runs the background work: checkpoints at least every 10 s while events arrive. */
export async function startServer(context: AppContext, options: ServeOptions): Promise<RunningServer> {
  const app = createApp(context, routeModules(context), options);
  const handle = app.callback();
  let connections: ReturnType<typeof limitConnections> | undefined;
  const server = http.createServer((req, res) => {
    if (connections?.overBound()) return refuseOverConnectionBound(res);
    void handle(req, res);
  });
  connections = limitConnections(server, options.maxConnections ?? DEFAULT_LIMITS.maxConnections);
  answerClientErrors(server);
  const arrivals = connectionArrivals(server);
  context.store.arrivals = arrivals;
  server.keepAliveTimeout = 65_000;
  // A client that trickles its headers or body holds a connection: the whole request must have
  // arrived well within twice the deadline (the deadline itself also covers reading the body).
  server.requestTimeout = Math.max(15_000, 2 * (options.requestDeadlineMs ?? DEFAULT_LIMITS.requestDeadlineMs));
  server.headersTimeout = Math.min(10_000, server.requestTimeout);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  // During an outage these fail every second: one line per few seconds with a count, no stack each time.
  const background = new RateLimitedLog((kind, count, message) => context.logger.warn({ count }, `${kind}: ${message}`));
  let checkpointTick: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    checkpointTick = context.ledger.checkpointGrownChains().catch((err) => background.note('periodic checkpoint failed', (err as Error)?.message ?? String(err)));
  }, CHECKPOINT_INTERVAL_MS);
  timer.unref();
  const sweeper = context.operations.startSweeper((err) => background.note('lease sweep failed', (err as Error)?.message ?? String(err)));
  const metricsListener = options.metrics ? await startMetricsListener(context.metrics, options.metrics.host, options.metrics.port) : null;
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // Webhook links to the approver page use where the server listens unless something better was set.
  context.approvals.publicBaseUrl ??= `http://${host}:${address.port}`;
  // Approval webhooks left in the outbox (by a crash, or by another instance) are delivered from here too.
  context.approvals.webhook.start();
  return {
    url: `http://${host}:${address.port}`,
    metricsUrl: metricsListener?.url ?? null,
    close: async () => {
      await metricsListener?.close();
      clearInterval(timer);
      background.flush();
      // A tick already running must finish before the caller closes the store under it.
      await checkpointTick;
      await sweeper.stop();
      await context.approvals.webhook.stop();
      if (context.store.arrivals === arrivals) context.store.arrivals = null;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
