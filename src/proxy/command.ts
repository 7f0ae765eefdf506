// A gated request → what the proxy claims: method, route and command (docs/proxy.md).
//
// The query-string rule (docs/proxy.md): the route never carries a query (docs/formats.md), so the
// query goes into the command, and is never dropped.
//   - no query string (or an empty one): the command is the JSON body, or null without a body;
//   - a query string: the command is {"body": <the JSON body or null>, "query": {name: [values…]}},
//     names and values percent-decoded as application/x-www-form-urlencoded, values in the order
//     sent (so `?a=1&b=2` and `?b=2&a=1` are one request, `?a=1&a=2` and `?a=2&a=1` are not);
//   - a path that is a route but for a trailing slash (`/items/`): recorded under the route without
//     it, and the command is {"body": …, "query": {…} or {}, "path": <the path as sent>};
//   - so that no two different requests share a command, a request without a query whose body is
//     an object with exactly the members "body" and "query" (or "body", "query" and "path") is
//     wrapped as a query's is, with "query": {} (a real query always has at least one name).
import { JsonInputError, parseStrictJson } from '../core/strict-json.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import { RouteError, validateRoute } from '../core/route.js';
import { ProxyError } from './errors.js';

/** The command nests inside the claim body; Gatehouse counts depth from the command (64). */
const COMMAND_MAX_DEPTH = 64;

export interface ClaimTarget {
  route: string;
  command: JsonValue;
}

/** Only JSON, or nothing: the command must be what the fingerprint pins, byte-independent. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return essence === 'application/json' || (essence.startsWith('application/') && essence.endsWith('+json'));
}

/**
 * The route a request path is recorded under, or null when it has none. A path that passes the
 * route rules (docs/formats.md) is its own route. One that passes them but for a trailing slash
 * (`/items/`: how Django-style APIs spell every path) is recorded under the route without it, its
 * exact path kept in the command (claimTarget), so `/items/` and `/items` are never one request;
 * a routes-file entry or a policy for `/items` applies to both. Anything else has no route: the
 * ledger does not guess what a path meant.
 */
export interface RecordedRoute {
  route: string;
  trailingSlash: boolean;
}

export function recordedRoute(path: string): RecordedRoute | null {
  if (isRoute(path)) return { route: path, trailingSlash: false };
  // Not `//`: that is `/` with an empty segment, not a route with a slash after it.
  if (path.length > 2 && path.endsWith('/') && isRoute(path.slice(0, -1))) return { route: path.slice(0, -1), trailingSlash: true };
  return null;
}

function isRoute(path: string): boolean {
  try {
    validateRoute(path);
    return true;
  } catch {
    return false;
  }
}

/** What a gated request is claimed as. `recorded`: recordedRoute(path), when the caller has it already (the proxy's router does). */
export function claimTarget(
  path: string, rawQuery: string, body: Buffer, contentType: string | undefined, recorded: RecordedRoute | null = recordedRoute(path),
): ClaimTarget {
  if (recorded === null) {
    let reason = 'it is not a valid route';
    try {
      validateRoute(path);
    } catch (error) {
      reason = error instanceof RouteError ? error.message : String(error);
    }
    throw new ProxyError('invalid_route', `the path cannot be recorded as a route: ${reason}`);
  }
  const { route } = recorded;
  const json = bodyCommand(body, contentType);
  const query = queryObject(rawQuery);
  if (recorded.trailingSlash) return { route, command: { body: json, query: query ?? {}, path } };
  if (query !== null) return { route, command: { body: json, query } };
  if (looksWrapped(json)) return { route, command: { body: json, query: {} } };
  return { route, command: json };
}

function bodyCommand(body: Buffer, contentType: string | undefined): JsonValue {
  if (body.length === 0) return null;
  if (!isJsonMediaType(contentType)) {
    throw new ProxyError('unsupported_media_type', 'a gated request carries a JSON body (Content-Type: application/json) or none');
  }
  try {
    // The same strict rules as Gatehouse: duplicate members, unsafe numbers and bad UTF-8 are refused, not guessed.
    return parseStrictJson(body, { maxDepth: COMMAND_MAX_DEPTH });
  } catch (error) {
    if (error instanceof JsonInputError) {
      throw new ProxyError(error.code, error.message);
    }
    throw error;
  }
}

/** The query as {name: [values in order]}, or null when there is none. */
export function queryObject(rawQuery: string): JsonObject | null {
  if (rawQuery === '') return null;
  const params = new URLSearchParams(rawQuery);
  // No prototype: a parameter named __proto__ is a name like any other.
  const query = Object.create(null) as Record<string, string[]>;
  let any = false;
  for (const [name, value] of params) {
    (query[name] ??= []).push(value);
    any = true;
  }
  return any ? query : null;
}

/** A body shaped as the wrapper of a request with a query or a trailing slash. */
function looksWrapped(json: JsonValue): boolean {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return false;
  const names = Object.keys(json);
  const wrapper = names.length === 2 || (names.length === 3 && names.includes('path'));
  return wrapper && names.includes('body') && names.includes('query');
}
