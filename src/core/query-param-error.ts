import { DomainError } from './errors.js';

/**
 * A refused query parameter (docs/http-api.md, Conventions): `invalid_request` naming it in the
 * message and in `error.parameter`. Here rather than with the parameter readers
 * (operations/query-params.ts) because every list's cursor (list-cursor.ts) refuses with it too.
 */
export function paramError(name: string, problem: string): DomainError {
  return new DomainError('invalid_request', `the query parameter "${name}" ${problem}`, { parameter: name });
}
