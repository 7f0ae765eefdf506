import { DomainError } from '../core/errors.js';

export const ROLES = ['gateway', 'approver', 'auditor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  id: string;
  account_id: string;
  roles: Role[];
  name: string | null;
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function hasRole(principal: Principal, ...roles: Role[]): boolean {
  return principal.roles.some((role) => roles.includes(role));
}

export function requireRole(principal: Principal, ...roles: Role[]): void {
  if (!hasRole(principal, ...roles)) {
    throw new DomainError('forbidden', `this call needs the role ${roles.join(' or ')}; the key has ${principal.roles.join(', ')}`);
  }
}

/** Admins act in any account; gateways and approvers only inside their own. */
export function canActInAccount(principal: Principal, accountId: string): boolean {
  return principal.account_id === accountId || hasRole(principal, 'admin');
}
