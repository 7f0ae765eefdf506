import type { AppContext } from '../../context.js';
import { rfc3339 } from '../../core/time.js';
import { RateLimitedLog } from '../../core/rate-limited-log.js';
import { probeWritable } from '../../store/health-probe.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { RETRY_AFTER_SECONDS } from '../error-status.js';
import { ANY_QUERY } from '../declared-queries.js';

/**
 * A health check answers at once, not when the store's own timeouts give up: a probe that has
 * not written within this long means the store is not serving. Load balancers poll with short
 * timeouts of their own; a check that hangs reads as "maybe", a 503 reads as "not this one".
 */
export const HEALTH_PROBE_TIMEOUT_MS = 2_000;

/** `GET /v1/healthz`: 200 only when the store takes a write, 503 store_unavailable otherwise (within 2 s). */
export function healthRoutes(deps: Pick<AppContext, 'store' | 'clock' | 'logger' | 'ledgerId'>): RouteModule {
  const router = newRouter();
  const failures = new RateLimitedLog((kind, count, message) => deps.logger.warn({ count }, `${kind}: ${message}`));
  // Polls during an outage share one probe in flight instead of queueing a write each. It is no
  // one poll's work, so it is given no request's WorkScope: a poller that goes away abandons nothing.
  let probe: Promise<void> | null = null;
  router.get('/v1/healthz', async (ctx) => {
    probe ??= probeWritable(deps.store, rfc3339(deps.clock.now())).finally(() => {
      probe = null;
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no write within ${HEALTH_PROBE_TIMEOUT_MS} ms`)), HEALTH_PROBE_TIMEOUT_MS);
    });
    try {
      await Promise.race([probe, timedOut]);
      ctx.body = { status: 'ok', store: deps.store.dialect, ledger_id: deps.ledgerId };
    } catch (error) {
      failures.note('health probe could not write to the store', (error as Error)?.message ?? String(error));
      ctx.status = 503;
      ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
      ctx.body = { status: 'unavailable', store: deps.store.dialect, error: { code: 'store_unavailable', message: 'the store cannot be written' } };
    } finally {
      clearTimeout(timer);
    }
  });
  return { router, publicPaths: ['/v1/healthz'], queries: { 'GET /v1/healthz': ANY_QUERY } };
}
