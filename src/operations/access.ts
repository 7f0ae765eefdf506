import type { Db } from '../store/store.js';
import { DomainError } from '../core/errors.js';
import { hasRole, type Principal, type Role } from '../principals/roles.js';
import { paramError } from './query-params.js';

/**
 * The account an operation id is looked up in: the caller's own, except for
 * roles that may reach into any account (admin for writes, admin and auditor
 * for reads), who are answered from the row's own account. Another account's
 * id then simply is not found: never reveal that it exists.
 */
export async function accountForOperation(db: Db, principal: Principal, id: string, anyAccountRoles: Role[]): Promise<string> {
  if (!hasRole(principal, ...anyAccountRoles)) return principal.account_id;
  const row = await db.selectFrom('operations').select('account_id').where('id', '=', id).executeTakeFirst();
  if (!row) throw new DomainError('not_found', `no operation ${id}`);
  return row.account_id;
}

/**
 * `?account_id=` on search and review (docs/http-api.md), already checked as an account id by
 * the query's parser: a gateway reads its own account (naming another is not found, never
 * "exists but not yours"); auditors and admins reach into any account, so they must say which.
 */
export function accountForReview(principal: Principal, requested: string | undefined): string {
  const anyAccount = hasRole(principal, 'admin', 'auditor');
  if (requested === undefined) {
    if (anyAccount && !hasRole(principal, 'gateway')) throw paramError('account_id', 'is required for auditor and admin keys');
    return principal.account_id;
  }
  if (requested !== principal.account_id && !anyAccount) throw new DomainError('not_found', `no account ${requested}`);
  return requested;
}
