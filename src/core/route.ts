/**
 * Method and route validation for the fingerprint (docs/formats.md#routes-and-methods). Nothing is
 * normalised: a route that is not already in the one accepted spelling is
 * refused, so two spellings of one path can never get two fingerprints (or one
 * spelling two meanings at the upstream).
 */

export type RouteErrorCode = 'invalid_route' | 'invalid_request';

export class RouteError extends Error {
  readonly code: RouteErrorCode;
  /** The member at fault: 'method' or 'route'. */
  readonly member: 'method' | 'route';

  constructor(code: RouteErrorCode, member: 'method' | 'route', message: string) {
    super(message);
    this.name = 'RouteError';
    this.code = code;
    this.member = member;
  }
}

/** RFC 9110 tchar, indexed by char code (ASCII only). */
const TCHAR = charTable("!#$%&'*+-.^_`|~", true);
/** RFC 3986 pchar minus '%' (handled apart), plus '/'. */
const PATH_CHAR = charTable("-._~!$&'()*+,;=:@/", true);
/** RFC 3986 unreserved: never to be percent-encoded. */
const UNRESERVED = charTable('-._~', true);

/**
 * Lengths past any real method or path, and short enough that a method, a route, the account
 * and the time fit one entry of the indexes that search reads them by (PostgreSQL refuses a
 * b-tree entry over 2,704 bytes; a route is ASCII, so characters are bytes).
 */
export const MAX_METHOD_LENGTH = 64;
export const MAX_ROUTE_LENGTH = 2048;

/** An RFC 9110 method token, returned upper-cased. */
export function validateMethod(method: unknown): string {
  if (typeof method !== 'string') {
    throw new RouteError('invalid_request', 'method', 'method must be a string');
  }
  if (method.length === 0) {
    throw new RouteError('invalid_request', 'method', 'method must not be empty');
  }
  if (method.length > MAX_METHOD_LENGTH) {
    throw new RouteError('invalid_request', 'method', `method must be at most ${MAX_METHOD_LENGTH} characters, not ${method.length}`);
  }
  for (let i = 0; i < method.length; i++) {
    const c = method.charCodeAt(i);
    if (!(c < 128 && TCHAR[c])) {
      throw new RouteError(
        'invalid_request',
        'method',
        `method must be an HTTP token (RFC 9110); ${describe(method, i)} at offset ${i} is not allowed`,
      );
    }
  }
  return method.toUpperCase();
}

/** The route exactly as given, or a RouteError('invalid_route') saying what is wrong with it. */
export function validateRoute(route: unknown): string {
  if (typeof route !== 'string') throw routeError('route must be a string');
  if (route.length === 0) throw routeError("route must not be empty; it must start with '/'");
  if (route.charCodeAt(0) !== 0x2f) throw routeError(`route must start with '/', found ${describe(route, 0)}`);
  if (route.length > MAX_ROUTE_LENGTH) throw routeError(`route must be at most ${MAX_ROUTE_LENGTH} characters, not ${route.length}`);

  for (let i = 0; i < route.length; i++) {
    const c = route.charCodeAt(i);
    if (c === 0x3f /* ? */) throw routeError(`route must not carry a query string ('?' at offset ${i})`);
    if (c === 0x23 /* # */) throw routeError(`route must not carry a fragment ('#' at offset ${i})`);
    if (c === 0x25 /* % */) {
      const h1 = upperHex(route.charCodeAt(i + 1));
      const h2 = upperHex(route.charCodeAt(i + 2));
      if (h1 < 0 || h2 < 0) {
        throw routeError(
          `route has a malformed percent escape at offset ${i}: '%' must be followed by two upper-case hex digits (0-9, A-F)`,
        );
      }
      const byte = h1 * 16 + h2;
      if (byte < 128 && UNRESERVED[byte]) {
        throw routeError(
          `route percent-encodes the unreserved character '${String.fromCharCode(byte)}' at offset ${i}; write it unencoded`,
        );
      }
      i += 2;
      continue;
    }
    if (!(c < 128 && PATH_CHAR[c])) {
      throw routeError(
        `route may hold only printable ASCII path characters (RFC 3986 pchar and '/'); ${describe(route, i)} at offset ${i} is not allowed (percent-encode it)`,
      );
    }
  }

  if (route === '/') return route;
  if (route.charCodeAt(route.length - 1) === 0x2f) throw routeError("route must not end with '/' (only the root route '/' may)");
  let start = 1;
  for (let index = 1; start <= route.length; index++) {
    let end = route.indexOf('/', start);
    if (end === -1) end = route.length;
    const segment = route.slice(start, end);
    if (segment === '') throw routeError(`route must not have an empty segment ('//' at offset ${start - 1})`);
    if (segment === '.' || segment === '..') {
      throw routeError(`route must not have a '${segment}' segment (segment ${index}, at offset ${start})`);
    }
    start = end + 1;
  }
  return route;
}

function routeError(message: string): RouteError {
  return new RouteError('invalid_route', 'route', message);
}

function charTable(extra: string, alnum: boolean): boolean[] {
  const table = new Array<boolean>(128).fill(false);
  for (const ch of extra) table[ch.charCodeAt(0)] = true;
  if (alnum) {
    for (let c = 0x30; c <= 0x39; c++) table[c] = true;
    for (let c = 0x41; c <= 0x5a; c++) table[c] = true;
    for (let c = 0x61; c <= 0x7a; c++) table[c] = true;
  }
  return table;
}

function upperHex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

function describe(s: string, i: number): string {
  const c = s.charCodeAt(i);
  if (c > 0x20 && c < 0x7f) return `'${s[i]}'`;
  const cp = s.codePointAt(i)!;
  return `character U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}
