/**
 * Route patterns of the policies file (docs/formats.md#policies-file): `method` matches exactly
 * (both sides upper-cased), `route` segment by segment, where a `*` segment
 * matches exactly one non-empty segment. The first match in file order wins.
 */
import { RouteError, validateMethod, validateRoute } from '../core/route.js';

export interface RoutePattern {
  method: string;
  /** The pattern as written, for messages. */
  route: string;
  /** Each segment; null stands for `*`. */
  segments: (string | null)[];
}

/** Thrown at load time; the loader turns it into a PolicyConfigError at the member's position. */
export class PatternError extends Error {
  constructor(readonly member: 'method' | 'route', message: string) {
    super(message);
  }
}

/** Parses one policy's method and route pattern; refuses what no valid route could ever match. */
export function compilePattern(method: string, route: string): RoutePattern {
  // RFC 9110 admits `*` as a method token, so it would match only a request whose method is the
  // literal `*`: a pattern meant as "any method" that silently never applies (and never asks
  // for the approval it names).
  if (method === '*') throw new PatternError('method', '"*" is not a wildcard for methods: name one method per entry (POST, PUT, …)');
  let upper: string;
  try {
    upper = validateMethod(method);
  } catch (error) {
    throw new PatternError('method', error instanceof RouteError ? error.message : String(error));
  }
  const segments = route === '/' ? [] : route.split('/').slice(1);
  for (const segment of segments) {
    if (segment !== '*' && segment.includes('*')) {
      throw new PatternError('route', `"${route}": a '*' must be a whole segment (it matches exactly one segment); write /v1/tickets/* rather than /v1/tickets/t*`);
    }
  }
  // Checking the pattern as a route (with each `*` as a plain segment) refuses
  // spellings that validateRoute would refuse in a request, so such a pattern
  // could never match anything.
  try {
    validateRoute(route.split('/').map((s) => (s === '*' ? 'x' : s)).join('/'));
  } catch (error) {
    throw new PatternError('route', `"${route}" is not a valid route pattern: ${error instanceof RouteError ? error.message : String(error)}`);
  }
  return { method: upper, route, segments: segments.map((s) => (s === '*' ? null : s)) };
}

/** `route` must already be valid (validateRoute) and `method` upper-cased (validateMethod). */
export function patternMatches(pattern: RoutePattern, method: string, route: string): boolean {
  if (pattern.method !== method) return false;
  const segments = route === '/' ? [] : route.split('/').slice(1);
  if (segments.length !== pattern.segments.length) return false;
  return pattern.segments.every((want, i) => want === null || want === segments[i]);
}

/** True when every request `later` matches is matched by `earlier` first, so `later` could never apply. */
export function shadows(earlier: RoutePattern, later: RoutePattern): boolean {
  if (earlier.method !== later.method || earlier.segments.length !== later.segments.length) return false;
  return earlier.segments.every((want, i) => want === null || want === later.segments[i]);
}
