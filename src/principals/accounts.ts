import { DomainError } from '../core/errors.js';

/** Account ids appear in checkpoint origin lines, so they stay a plain, printable token. */
const ACCOUNT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function validateAccountId(value: unknown, member = 'account_id'): string {
  if (typeof value !== 'string' || !ACCOUNT_ID.test(value)) {
    throw new DomainError('invalid_request', `the member "${member}" must be 1-64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit`);
  }
  return value;
}
