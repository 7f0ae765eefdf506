import { Readable } from 'node:stream';
import type { AppContext } from '../../context.js';
import { principalOf } from '../auth.js';
import { DomainError } from '../../core/errors.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { readJsonBody } from '../body.js';
import { validateCheckpointRequest } from '../request-schemas.js';
import { accountIdParam, integerParam, positionParam, requiredAccountIdParam } from '../query.js';
import { requireRole } from '../../principals/roles.js';
import { validateAccountId } from '../../principals/accounts.js';
import { rfc3339 } from '../../core/time.js';
import { eventsPage, exportLines } from '../../ledger/export.js';
import { workScopeOf } from '../deadline.js';
import { withCosignaturesOne } from '../../ledger/cosignatures.js';

const MAX_PAGE = 1000;


/** Audit routes (auditor, admin) and the public keys. */
export function ledgerRoutes(deps: Pick<AppContext, 'store' | 'ledger' | 'clock' | 'ledgerId' | 'publicKeys'>): RouteModule {
  const router = newRouter();

  router.get('/v1/keys', (ctx) => {
    ctx.body = { keys: deps.publicKeys() };
  });

  router.get('/v1/audit/events', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = requiredAccountIdParam(ctx);
    const afterSeq = positionParam(ctx, 'after_seq');
    const limit = integerParam(ctx, 'limit', { fallback: 100, min: 1, max: MAX_PAGE });
    ctx.body = await eventsPage(deps.store.db, accountId, afterSeq, limit);
  });

  router.get('/v1/audit/checkpoints/latest', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = requiredAccountIdParam(ctx);
    const checkpoint = await deps.ledger.latestCheckpoint(accountId);
    if (!checkpoint) throw new DomainError('not_found', `no checkpoint yet for account ${accountId}`);
    ctx.body = checkpoint;
  });

  router.post('/v1/audit/checkpoints', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const { account_id } = validateCheckpointRequest(await readJsonBody(ctx, ctx.state.maxBodyBytes));
    ctx.status = 201;
    ctx.body = await withCosignaturesOne(deps.store.db, await deps.ledger.checkpoint(validateAccountId(account_id), workScopeOf(ctx)));
  });

  router.get('/v1/audit/export', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = accountIdParam(ctx) ?? null;
    ctx.type = 'application/x-ndjson';
    ctx.body = Readable.from(exportLines(deps.store.db, {
      ledger_id: deps.ledgerId, account_id: accountId, exported_at: rfc3339(deps.clock.now()), keys: deps.publicKeys(),
    }));
  });

  return {
    router,
    publicPaths: ['/v1/keys'],
    bodies: { 'POST /v1/audit/checkpoints': validateCheckpointRequest },
    queries: {
      'GET /v1/audit/events': ['account_id', 'after_seq', 'cursor', 'limit'],
      'GET /v1/audit/checkpoints/latest': ['account_id'],
      'GET /v1/audit/export': ['account_id'],
    },
  };
}

