import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';
import { NUL_PROBLEM } from '../core/stored-text.js';

// One Ajv for request bodies; schemas live in schema/requests so the OpenAPI document can reuse them.
const ajv = new Ajv2020({ allErrors: false, strict: true, useDefaults: false });

export interface BodyValidator<T> {
  (body: JsonValue): T;
  /** The schema's `$id`: its file name in schema/requests. */
  readonly schemaId: string;
}

/** Compiles a request schema once; the returned function validates and types the body, or throws invalid_request naming the member. */
export function bodyValidator<T>(schema: { $id: string }): BodyValidator<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  const check = (body: JsonValue): T => {
    if (!validate(body)) throw new DomainError('invalid_request', describe(validate.errors ?? []));
    return body as T;
  };
  return Object.assign(check, { schemaId: schema.$id });
}

/** The schemas' pattern for text the service keeps: anything but U+0000 (core/stored-text.ts). */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

function describe(errors: ErrorObject[]): string {
  const error = errors[0];
  if (!error) return 'the request body is not valid';
  // A missing or unknown member is reported on the object that holds it: named from the body
  // down ("summary.foo", "response.status"), as an error on a member's own value is.
  if (error.keyword === 'required') return `the member "${memberAt(error.instancePath, (error.params as { missingProperty: string }).missingProperty)}" is required`;
  if (error.keyword === 'additionalProperties') {
    return `the member "${memberAt(error.instancePath, (error.params as { additionalProperty: string }).additionalProperty)}" is not allowed here`;
  }
  const member = memberAt(error.instancePath);
  if (error.keyword === 'pattern' && (error.params as { pattern: string }).pattern === NO_NUL_PATTERN) return `the member "${member}" ${NUL_PROBLEM}`;
  return `the member "${member}" ${error.message ?? 'is not valid'}`;
}

/** Ajv's JSON Pointer (`/summary/target`) as member names joined by dots, `child` appended; "body" for the body itself. */
function memberAt(instancePath: string, child?: string): string {
  const names = instancePath.split('/').slice(1).map((name) => name.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (child !== undefined) names.push(child);
  return names.length > 0 ? names.join('.') : 'body';
}
