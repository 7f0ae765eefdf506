import type { Db } from '../store/store.js';
import { DomainError } from '../core/errors.js';
import { hasRole, type Principal, type Role } from '../principals/roles.js';
import { ACCOUNT_ID_RULE, isAccountId } from '../principals/accounts.js';
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

/** `?account_id=` on lists: admins and auditors may name any account; anyone else only sees their own. */
export function accountForList(principal: Principal, requested: unknown): string {
  if (requested === undefined) return principal.account_id;
  if (!isAccountId(requested)) throw paramError('account_id', ACCOUNT_ID_RULE);
  const accountId = requested;
  if (accountId !== principal.account_id && !hasRole(principal, 'admin', 'auditor')) {
    throw new DomainError('not_found', `no account ${accountId}`);
  }
  return accountId;
}

/**
 * `?account_id=` on search and review (docs/http-api.md): a gateway reads its own account (naming
 * another is not found); auditors and admins reach into any account, so they must say which.
 */
export function accountForReview(principal: Principal, requested: string | undefined): string {
  if (requested === undefined) {
    if (hasRole(principal, 'admin', 'auditor') && !hasRole(principal, 'gateway')) throw paramError('account_id', 'is required for auditor and admin keys');
    return principal.account_id;
  }
  return accountForList(principal, requested);
}
