import { DomainError } from '../core/errors.js';

/** Account ids appear in checkpoint origin lines, so they stay a plain, printable token. */
const ACCOUNT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** What an account id must be, completing "the member …" or "the query parameter …". */
export const ACCOUNT_ID_RULE = 'must be 1-64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit';

export function isAccountId(value: unknown): value is string {
  return typeof value === 'string' && ACCOUNT_ID.test(value);
}

/**
 * An account id in a body member (or a CLI option or argument: `what` names it in the refusal);
 * query parameters use accountIdParam (operations/query-params.ts).
 */
export function validateAccountId(value: unknown, what = 'the member "account_id"'): string {
  if (!isAccountId(value)) throw new DomainError('invalid_request', `${what} ${ACCOUNT_ID_RULE}`);
  return value;
}
