// Which requests the proxy gates (docs/proxy.md): every POST, PUT, PATCH and DELETE by default;
// a routes file `{"routes": [{"method", "route", "gated"}]}` changes that, first match wins,
// with the policies file's pattern rules (`*` matches exactly one segment).
import { readFileSync } from 'node:fs';
import { JsonInputError, parseStrictJson } from '../core/strict-json.js';
import { compilePattern, PatternError, patternMatches, shadows, type RoutePattern } from '../policies/route-match.js';

const GATED_BY_DEFAULT = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface RouteGate {
  /** `path` is the route the request is recorded under (command.ts, recordedRoute), else its path without the query; `validRoute` says whether it has such a route. */
  isGated(method: string, path: string, validRoute: boolean): boolean;
}

interface Entry {
  pattern: RoutePattern;
  gated: boolean;
}

export class RoutesFileError extends Error {}

export function defaultGate(): RouteGate {
  return routeGate([]);
}

function routeGate(entries: Entry[]): RouteGate {
  return {
    isGated(method, path, validRoute) {
      const upper = method.toUpperCase();
      // A path no route rule admits matches no entry: it keeps the default, and a gated one is then refused as invalid_route.
      if (validRoute) {
        for (const entry of entries) if (patternMatches(entry.pattern, upper, path)) return entry.gated;
      }
      return GATED_BY_DEFAULT.has(upper);
    },
  };
}

/**
 * Parses a routes file's text; every problem names the entry and stops start-up. An entry an
 * earlier one covers is no problem of the file's form: the first match wins (docs/proxy.md), so it
 * loads and never applies, and `warn` says so, since it is most likely a mistake.
 */
export function parseRoutes(text: string, source = 'routes file', warn: (message: string) => void = () => {}): RouteGate {
  let doc: unknown;
  try {
    doc = parseStrictJson(text);
  } catch (error) {
    throw new RoutesFileError(`${source}: ${error instanceof JsonInputError ? error.message : String(error)}`);
  }
  if (!isObject(doc) || !Array.isArray(doc.routes)) throw new RoutesFileError(`${source}: expected {"routes": [{"method", "route", "gated"}, …]}`);
  for (const name of Object.keys(doc)) if (name !== 'routes') throw new RoutesFileError(`${source}: unknown member "${name}"`);
  const entries: Entry[] = [];
  doc.routes.forEach((raw, i) => {
    const where = `${source}: routes[${i}]`;
    if (!isObject(raw)) throw new RoutesFileError(`${where} must be an object`);
    for (const name of Object.keys(raw)) {
      if (!['method', 'route', 'gated'].includes(name)) throw new RoutesFileError(`${where}: unknown member "${name}"`);
    }
    if (typeof raw.method !== 'string') throw new RoutesFileError(`${where}: "method" must be a string`);
    if (typeof raw.route !== 'string') throw new RoutesFileError(`${where}: "route" must be a string pattern such as /tickets/*`);
    if (typeof raw.gated !== 'boolean') throw new RoutesFileError(`${where}: "gated" must be true or false`);
    let pattern: RoutePattern;
    try {
      pattern = compilePattern(raw.method, raw.route);
    } catch (error) {
      throw new RoutesFileError(`${where}: ${error instanceof PatternError ? error.message : String(error)}`);
    }
    const earlier = entries.findIndex((e) => shadows(e.pattern, pattern));
    if (earlier !== -1) {
      warn(`${where} (${pattern.method} ${raw.route}) can never apply: routes[${earlier}] (${entries[earlier]!.pattern.method} ${entries[earlier]!.pattern.route}) matches every request it would, and the first match wins; move the more specific entry first or remove one`);
    }
    entries.push({ pattern, gated: raw.gated });
  });
  return routeGate(entries);
}

export function loadRoutesFile(file: string, warn: (message: string) => void): RouteGate {
  return parseRoutes(readFileSync(file, 'utf8'), file, warn);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
