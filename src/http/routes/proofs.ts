import type { AppContext } from '../../context.js';
import { principalOf } from '../auth.js';
import { DomainError } from '../../core/errors.js';
import { integerParam, onlyParams, positionParam } from '../query.js';
import { newRouter, type RouteModule } from '../route-module.js';
import { validateAccountId } from '../../principals/accounts.js';
import { requireRole } from '../../principals/roles.js';
import { withCosignatures } from '../../ledger/cosignatures.js';
import { consistencyProofOf, inclusionProofOf } from '../../ledger/proofs.js';

const MAX_PAGE = 1000;
const ANY_SIZE = { min: 0, max: Number.MAX_SAFE_INTEGER };

function requiredInteger(ctx: Parameters<typeof integerParam>[0], name: string): number {
  const value = integerParam(ctx, name, { fallback: -1, ...ANY_SIZE });
  if (value === -1) throw new DomainError('invalid_request', `the query parameter "${name}" is required`);
  return value;
}

/** Proofs and the checkpoint list (auditor, admin): what a third party needs to check one event or a witness. */
export function proofRoutes(context: Pick<AppContext, 'store'>): RouteModule {
  const router = newRouter();

  router.get('/v1/audit/proofs/inclusion', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    onlyParams(ctx, ['account_id', 'seq', 'tree_size']);
    const accountId = validateAccountId(ctx.query.account_id);
    const seq = requiredInteger(ctx, 'seq');
    const treeSize = requiredInteger(ctx, 'tree_size');
    ctx.body = await inclusionProofOf(context.store.db, accountId, seq, treeSize);
  });

  router.get('/v1/audit/proofs/consistency', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    onlyParams(ctx, ['account_id', 'from', 'to']);
    const accountId = validateAccountId(ctx.query.account_id);
    const from = requiredInteger(ctx, 'from');
    const to = requiredInteger(ctx, 'to');
    ctx.body = await consistencyProofOf(context.store.db, accountId, from, to);
  });

  router.get('/v1/audit/checkpoints', async (ctx) => {
    requireRole(principalOf(ctx), 'auditor', 'admin');
    onlyParams(ctx, ['account_id', 'after_size', 'cursor', 'limit']);
    const accountId = validateAccountId(ctx.query.account_id);
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

  return { router };
}
