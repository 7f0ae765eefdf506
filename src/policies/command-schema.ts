/**
 * A policy's command schema (docs/formats.md: the fingerprint, the policies file): JSON Schema 2020-12, with
 * its defaults applied before fingerprinting, so `{"priority": "normal"}` and
 * `{}` with that default are one command and get one fingerprint.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { JsonObject, JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';

export interface CommandError {
  /** JSON Pointer (RFC 6901) into the command; '' is the command itself. */
  path: string;
  message: string;
}

export type CommandPreparer = (command: JsonValue) => JsonValue;

/** A body with thousands of errors helps nobody and costs bytes; the first ones say what to fix. */
const MAX_ERRORS = 50;

/**
 * Compiles once at load time; throws (ajv's own Error) when the schema does
 * not compile, which the loader reports as a config error. Strict mode refuses
 * unknown keywords and ignored defaults: a misspelt `"requried"` must stop
 * start-up rather than silently let every command through. The standard
 * formats (`email`, `date-time`, `uri`, `uuid`, …) are checked (ajv-formats);
 * one no validator knows is refused the same way, since it would check nothing.
 */
export function compileCommandSchema(schema: JsonValue, label: string): CommandPreparer {
  // One Ajv per schema: two policies may reuse one `$id` without colliding.
  const ajv = newAjv(true);
  const validate: ValidateFunction = ajv.compile(deepCopy(schema) as object);
  refuseInvalidDefaults(schema);
  return (command) => {
    // Defaults are written into the data: work on a copy so the caller's value stays as sent.
    const prepared = deepCopy(command);
    if (validate(prepared)) return prepared;
    const errors = (validate.errors ?? []).slice(0, MAX_ERRORS).map(toCommandError);
    const first = errors[0];
    const more = (validate.errors?.length ?? 0) - 1;
    const summary = first ? `${first.path || 'the command'} ${first.message}` : 'it is not valid';
    throw new DomainError(
      'command_invalid',
      `the command does not satisfy the policy schema for ${label}: ${summary}${more > 0 ? ` (and ${more} more)` : ''}`,
      { errors },
    );
  };
}

const AJV_OPTIONS = {
  allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false, logger: false,
} as const;

function newAjv(useDefaults: boolean): Ajv2020 {
  const ajv = new Ajv2020({ ...AJV_OPTIONS, useDefaults });
  // A CommonJS module: under ESM its default import is module.exports, which carries the plugin as `default` too.
  ajvFormats.default(ajv);
  return ajv;
}

/**
 * A default its own schema refuses would be written into every command that lacks the member,
 * and then refused: no request to the route could ever leave the member out, and the error would
 * blame the caller for a value the policy wrote. Found at load time instead, as a config error.
 * Each default is validated against the subschema it stands in (through a `$ref` into the whole
 * schema, so its own `$ref`s resolve), by an Ajv that applies no defaults.
 */
function refuseInvalidDefaults(schema: JsonValue): void {
  const defaults = [...defaultsIn(schema, '')];
  if (defaults.length === 0) return; // most schemas: no second Ajv at start-up
  const checker = newAjv(false);
  const root = 'gatehouse:policy-schema';
  checker.addSchema(deepCopy(schema) as object, root);
  for (const { pointer, value } of defaults) {
    const check = checker.getSchema(`${root}#${pointer}`);
    if (check && !check(deepCopy(value))) {
      throw new Error(`the default at ${pointer || '/'} does not satisfy its own schema (${checker.errorsText(check.errors, { dataVar: 'default' })})`);
    }
  }
}

/** The subschemas a JSON Schema 2020-12 holds, by keyword: where a `default` is a keyword, not a member name. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];

function* defaultsIn(schema: JsonValue | undefined, pointer: string): Generator<{ pointer: string; value: JsonValue }> {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return;
  if (Object.hasOwn(schema, 'default')) yield { pointer, value: schema.default! };
  const at = (...tokens: string[]) => pointer + tokens.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  for (const keyword of SCHEMA_MAPS) {
    const map = schema[keyword];
    if (map && typeof map === 'object' && !Array.isArray(map)) for (const name of Object.keys(map)) yield* defaultsIn(map[name], at(keyword, name));
  }
  for (const keyword of SCHEMA_LISTS) {
    const list = schema[keyword];
    if (Array.isArray(list)) for (let i = 0; i < list.length; i++) yield* defaultsIn(list[i], at(keyword, String(i)));
  }
  for (const keyword of SCHEMA_ONE) yield* defaultsIn(schema[keyword], at(keyword));
}

/** Points at the member itself for `required` and `additionalProperties`, where ajv points at its parent. */
function toCommandError(error: ErrorObject): CommandError {
  const params = error.params as { missingProperty?: string; additionalProperty?: string; unevaluatedProperty?: string };
  const member = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
  if (member === undefined) return { path: error.instancePath, message: error.message ?? 'is not valid' };
  const path = `${error.instancePath}/${member.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return { path, message: error.keyword === 'required' ? 'is required' : 'is not allowed by the schema' };
}

/** A plain copy that keeps a `__proto__` member as an own data member, as the strict parser made it. */
function deepCopy(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(deepCopy);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, { value: deepCopy(value[key]!), writable: true, enumerable: true, configurable: true });
  }
  return out;
}
