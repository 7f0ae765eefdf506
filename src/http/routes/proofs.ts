import type { AppContext } from '../../context.js';
import { principalOf } from '../auth.js';
import { integerParam, positionParam, requiredAccountIdParam, requiredIntegerParam } from '../query.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { paramError } from '../../operations/query-params.js';
import { requireRole } from '../../principals/roles.js';
import { withCosignatures } from '../../ledger/cosignatures.js';
import { consistencyProofOf, inclusionProofOf } from '../../ledger/proofs.js';

const MAX_PAGE = 1000;
const ANY_SIZE = { min: 0, max: Number.MAX_SAFE_INTEGER };

/** Proofs and the checkpoint list (auditor, admin): what a third party needs to check one event or a witness. */
export function proofRoutes(context: Pick<AppContext, 'store'>): RouteModule {
  const router = newRouter();

  router.get('/v1/audit/proofs/inclusion', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = requiredAccountIdParam(ctx);
    const seq = requiredIntegerParam(ctx, 'seq', ANY_SIZE);
    const treeSize = requiredIntegerParam(ctx, 'tree_size', ANY_SIZE);
    // A seq or size the log does not have is a refused query parameter like any other.
    ctx.body = await inclusionProofOf(context.store.db, accountId, seq, treeSize, paramError);
  });

  router.get('/v1/audit/proofs/consistency', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = requiredAccountIdParam(ctx);
    const from = requiredIntegerParam(ctx, 'from', ANY_SIZE);
    const to = requiredIntegerParam(ctx, 'to', ANY_SIZE);
    ctx.body = await consistencyProofOf(context.store.db, accountId, from, to, paramError);
  });

  router.get('/v1/audit/checkpoints', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    const accountId = requiredAccountIdParam(ctx);
    const afterSize = positionParam(ctx, 'after_size');
    const limit = integerParam(ctx, 'limit', { fallback: 100, min: 1, max: MAX_PAGE });
    const rows = await context.store.db.selectFrom('checkpoints').selectAll()
      .where('account_id', '=', accountId).where('tree_size', '>', afterSize).orderBy('tree_size').limit(limit + 1).execute();
    const page = rows.slice(0, limit);
    ctx.body = {
      items: await withCosignatures(context.store.db, page),
      next_cursor: rows.length > limit ? String(page[page.length - 1]!.tree_size) : null,
    };
  });

  return {
    router,
    queries: {
      'GET /v1/audit/proofs/inclusion': ['account_id', 'seq', 'tree_size'],
      'GET /v1/audit/proofs/consistency': ['account_id', 'from', 'to'],
      'GET /v1/audit/checkpoints': ['account_id', 'after_size', 'cursor', 'limit'],
    },
  };
}
