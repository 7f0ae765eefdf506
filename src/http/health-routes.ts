import Router from '@koa/router';
import type { AppContext } from '../context.js';
import { rfc3339 } from '../core/time.js';
import type { RouteModule } from './route-module.js';

/**
 * Health is honest: it writes to the store, so a database that can no longer
 * take writes (disk full, read-only, lost connection) answers 503, not green.
 */
export function healthRoutes(context: AppContext): RouteModule {
  const router = new Router();
  router.get('/v1/healthz', async (ctx) => {
    try {
      const now = rfc3339(context.clock.now());
      await context.store.transact((trx) =>
        trx.insertInto('meta').values({ key: 'health_probe', value: now })
          .onConflict((oc) => oc.column('key').doUpdateSet({ value: now })).execute(),
      );
      ctx.body = { status: 'ok', store: context.store.dialect, ledger_id: context.ledgerId };
    } catch (error) {
      context.logger.warn({ err: error }, 'health probe could not write to the store');
      ctx.status = 503;
      ctx.set('Retry-After', '1');
      ctx.body = { status: 'unavailable', store: context.store.dialect, error: { code: 'store_unavailable', message: 'the store cannot be written' } };
    }
  });
  return { router, publicPaths: [/^\/v1\/healthz$/] };
}
