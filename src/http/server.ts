import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { AppContext } from '../context.js';
import { createApp, type HttpOptions } from './app.js';
import { DEFAULT_LIMITS } from './limits.js';
import { limitConnections, refuseOverConnectionBound } from './connection-limit.js';
import { connectionArrivals } from './connection-arrivals.js';
import { answerClientErrors, refusedWithoutHost } from './client-error.js';
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
  /**
   * Where people reach the service (serve --public-url, no trailing slash): the base of the
   * links it sends about itself. Default: where it listens, right only when that is where people reach it.
   */
  publicUrl?: string;
}

export interface RunningServer {
  url: string;
  /** Listening on 0.0.0.0 or ::, an address no link can point to. */
  listensOnEveryAddress: boolean;
  /** The unauthenticated metrics listener's URL, when one was asked for. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

/** Every domain's routes, in one list so the OpenAPI test can walk them all. */
export function routeModules(context: AppContext): RouteModule[] {
  return [healthRoutes(context), openapiRoutes(), ledgerRoutes(context), proofRoutes(context), principalRoutes(context), fingerprintRoutes(context), operationRoutes(context),
    approvalRoutes(context), reviewRoutes(context), uiRoutes(context), metricsRoutes(context)];
}

/** During a stop, time beyond the deadline for the last answers to be written. */
const DRAIN_GRACE_MS = 1_000;
/** During a stop, how long an idle keep-alive connection is still read, for a request already sent on it. */
const IDLE_GRACE_MS = 100;

/**
 * Responses that, once `stopping()` is true, close their connection after they are sent: each
 * decides when it writes its head (Node's implicit head included), so an answer already being
 * worked on when the stop begins closes its connection as one that arrives later does.
 *
 * Not a set of the answers in flight, as this was: a long-lived Set that adds and deletes a
 * response per request rehashes into a new table every few dozen requests, and V8 leaves each
 * old table linked to the next with its entries in place (for iterators). Once one table had
 * reached the old generation, that chain kept every response it ever held, with its request and
 * headers, alive through each young-generation GC until the next full one: under replays about
 * 5 MB copied and promoted per scavenge, 12 % of the server's time in GC (BENCHMARKS.md,
 * twenty-eighth session).
 */
function closingWhen(stopping: () => boolean) {
  return class ClosingResponse extends http.ServerResponse {
    override writeHead(...args: unknown[]): this {
      if (stopping()) this.shouldKeepAlive = false;
      return (http.ServerResponse.prototype.writeHead as (...a: unknown[]) => this).apply(this, args);
    }
  };
}

/** Serves HTTP and runs the background work: checkpoints at least every 10 s while events arrive. */
export async function startServer(context: AppContext, options: ServeOptions): Promise<RunningServer> {
  const app = createApp(context, routeModules(context), options);
  const handle = app.callback();
  let connections: ReturnType<typeof limitConnections> | undefined;
  let stopping = false;
  let closingIdle = false;
  // An answer begun before the stop may have kept its connection alive: it is idle from the next
  // turn on, and closed then. One function for every answer: no closure per request.
  const afterAnswer = () => {
    if (closingIdle) setImmediate(() => server.closeIdleConnections());
  };
  // Node enforces headersTimeout and requestTimeout only when it checks its connections, every
  // 30 s by default: a connection that sent half its headers was cut at 10 to 40 s. Checked each
  // second, the documented 10 s holds to within one.
  const server = http.createServer({ ServerResponse: closingWhen(() => stopping), connectionsCheckingInterval: 1_000, requireHostHeader: false }, (req, res) => {
    if (connections?.overBound()) return refuseOverConnectionBound(res);
    if (refusedWithoutHost(req, res)) return;
    res.on('close', afterAnswer);
    void handle(req, res);
  });
  connections = limitConnections(server, options.maxConnections ?? DEFAULT_LIMITS.maxConnections);
  answerClientErrors(server);
  const arrivals = connectionArrivals(server);
  context.store.arrivals = arrivals;
  server.keepAliveTimeout = 65_000;
  const deadlineMs = options.requestDeadlineMs ?? DEFAULT_LIMITS.requestDeadlineMs;
  // A client that trickles its headers or body holds a connection: the whole request must have
  // arrived well within twice the deadline (the deadline itself also covers reading the body).
  server.requestTimeout = Math.max(15_000, 2 * deadlineMs);
  server.headersTimeout = Math.min(10_000, server.requestTimeout);
  // The metrics listener first: if either port is taken, nothing is left listening or running
  // (the caller reports the error and exits), rather than a service half up without the other.
  const metricsListener = options.metrics ? await startMetricsListener(context.metrics, options.metrics.host, options.metrics.port) : null;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, resolve);
    });
  } catch (error) {
    await metricsListener?.close();
    throw error;
  }
  // During an outage these fail every second: one line per few seconds with a count, no stack each time.
  const background = new RateLimitedLog((kind, count, message) => context.logger.warn({ count }, `${kind}: ${message}`));
  const checkpoints = context.ledger.startCheckpointTimer((err) => background.note('periodic checkpoint failed', (err as Error)?.message ?? String(err)));
  const sweeper = context.operations.startSweeper((err) => background.note('lease sweep failed', (err as Error)?.message ?? String(err)));
  const requestExpiry = context.approvals.startExpirySweeper((err) => background.note('approval expiry failed', (err as Error)?.message ?? String(err)));
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // Where the approver-page links of webhooks point. Where it listens is right only when people
  // reach it there (one local instance): behind a proxy or on 0.0.0.0 it takes --public-url.
  context.approvals.publicBaseUrl = options.publicUrl ?? `http://${host}:${address.port}`;
  // Approval webhooks left in the outbox (by a crash, or by another instance) are delivered from here too.
  context.approvals.webhook.start();
  return {
    url: `http://${host}:${address.port}`,
    listensOnEveryAddress: address.address === '0.0.0.0' || address.address === '::',
    metricsUrl: metricsListener?.url ?? null,
    /**
     * A graceful stop. The listener closes at once (no new connection). Every request already
     * received — worked on, or its body still arriving — is worked to its end and answered with
     * `Connection: close`, and its connection closed after the answer. Idle keep-alive connections
     * are closed after IDLE_GRACE_MS: a request a client had already sent on one (a batch of answers
     * went out, the next requests are in the socket buffers) is read and answered, not reset.
     *
     * The listener is closed with net.Server's close, not http.Server's: that one also closes the
     * idle connections at once and stops Node's headersTimeout/requestTimeout checks, which bound
     * the requests still arriving. Once a request is in, the deadline bounds its work, so the drain
     * is bounded; past that bound the connections still open are closed (their requests abandoned).
     */
    close: async () => {
      stopping = true;
      const drained = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
      const idle = setTimeout(() => {
        closingIdle = true;
        server.closeIdleConnections();
      }, IDLE_GRACE_MS);
      const force = setTimeout(() => server.closeAllConnections(), server.headersTimeout + deadlineMs + DRAIN_GRACE_MS);
      await Promise.all([drained, metricsListener?.close()]);
      clearTimeout(idle);
      clearTimeout(force);
      // Nothing is open any more: http.Server's close now only ends Node's timeout checks.
      server.close();
      background.flush();
      // A pass already running must finish before the caller closes the store under it.
      await checkpoints.stop();
      await sweeper.stop();
      await requestExpiry.stop();
      await context.approvals.webhook.stop();
      if (context.store.arrivals === arrivals) context.store.arrivals = null;
    },
  };
}
