import Router from '@koa/router';
import type { AppContext } from '../../context.js';
import { rfc3339 } from '../../core/time.js';
import { probeWritable } from '../../store/health-probe.js';
import type { RouteModule } from '../route-module.js';

/** `GET /v1/healthz`: 200 only when the store takes a write, 503 store_unavailable otherwise. */
export function healthRoutes(deps: Pick<AppContext, 'store' | 'clock' | 'logger' | 'ledgerId'>): RouteModule {
  const router = new Router();
  router.get('/v1/healthz', async (ctx) => {
    try {
      await probeWritable(deps.store, rfc3339(deps.clock.now()));
      ctx.body = { status: 'ok', store: deps.store.dialect, ledger_id: deps.ledgerId };
    } catch (error) {
      deps.logger.warn({ err: error }, 'health probe could not write to the store');
      ctx.status = 503;
      ctx.set('Retry-After', '1');
      ctx.body = { status: 'unavailable', store: deps.store.dialect, error: { code: 'store_unavailable', message: 'the store cannot be written' } };
    }
  });
  return { router, publicPaths: [/^\/v1\/healthz$/] };
}
