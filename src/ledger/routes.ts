import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { AppContext } from '../context.js';
import { principalOf } from '../http/auth.js';
import { AppError } from '../http/errors.js';
import type { RouteModule } from '../http/route-module.js';
import { readJsonBody } from '../http/body.js';
import { bodyValidator } from '../http/validate.js';
import { integerParam } from '../http/query.js';
import { requireRole } from '../principals/roles.js';
import { validateAccountId } from '../principals/accounts.js';
import { rfc3339 } from '../core/time.js';
import { exportLines, toExportedEvent } from './export.js';

const MAX_PAGE = 1000;

const validateCheckpointRequest = bodyValidator<{ account_id: string }>({
  type: 'object', required: ['account_id'], additionalProperties: false,
  properties: { account_id: { type: 'string', minLength: 1 } },
});

/** Audit routes (auditor, admin) and the public keys. */
export function ledgerRoutes(context: AppContext): RouteModule {
  const router = new Router();

  router.get('/v1/keys', (ctx) => {
    ctx.body = { keys: context.publicKeys() };
  });

  router.get('/v1/audit/events', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = validateAccountId(ctx.query.account_id);
    const afterSeq = integerParam(ctx, 'after_seq', { fallback: 0, min: 0, max: Number.MAX_SAFE_INTEGER });
    const limit = integerParam(ctx, 'limit', { fallback: 100, min: 1, max: MAX_PAGE });
    const rows = await context.store.db.selectFrom('events').selectAll()
      .where('account_id', '=', accountId).where('seq', '>', afterSeq).orderBy('seq').limit(limit + 1).execute();
    const page = rows.slice(0, limit);
    ctx.body = {
      items: page.map((row) => {
        const { header, hash, payload } = toExportedEvent(row);
        return { header, hash, payload };
      }),
      next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null,
    };
  });

  router.get('/v1/audit/checkpoints/latest', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = validateAccountId(ctx.query.account_id);
    const checkpoint = await context.ledger.latestCheckpoint(accountId);
    if (!checkpoint) throw new AppError('not_found', `no checkpoint yet for account ${accountId}`);
    ctx.body = checkpoint;
  });

  router.post('/v1/audit/checkpoints', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const { account_id } = validateCheckpointRequest(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    ctx.status = 201;
    ctx.body = await context.ledger.checkpoint(validateAccountId(account_id));
  });

  router.get('/v1/audit/export', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = ctx.query.account_id === undefined ? null : validateAccountId(ctx.query.account_id);
    ctx.type = 'application/x-ndjson';
    ctx.body = Readable.from(exportLines(context.store.db, {
      ledger_id: context.ledgerId, account_id: accountId, exported_at: rfc3339(context.clock.now()), keys: context.publicKeys(),
    }));
  });

  return { router, publicPaths: [/^\/v1\/keys$/] };
}

