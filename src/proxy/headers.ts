// Header handling between the agent, the proxy and the upstream (RFC 9110 §7.6.1): hop-by-hop
// headers describe one connection and never travel further; everything else is passed on.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings',
]);

/** The names the Connection header lists are hop-by-hop too, for this message. */
function connectionTokens(headers: IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  const tokens = new Set<string>();
  for (const part of (Array.isArray(value) ? value.join(',') : value ?? '').split(',')) {
    const name = part.trim().toLowerCase();
    if (name) tokens.add(name);
  }
  return tokens;
}

export function endToEnd(headers: IncomingHttpHeaders, drop: readonly string[] = []): OutgoingHttpHeaders {
  const listed = connectionTokens(headers);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || drop.includes(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * The request as the upstream receives it: hop-by-hop headers removed, `Idempotency-Key` kept
 * (an API that honours it gets a second safety net), Host set to the upstream, and the usual
 * X-Forwarded-* so the API can still see who called.
 */
export function upstreamRequestHeaders(incoming: IncomingHttpHeaders, upstreamHost: string, clientAddress: string | undefined): OutgoingHttpHeaders {
  const out = endToEnd(incoming, ['host', 'content-length']);
  const forwardedFor = incoming['x-forwarded-for'];
  const chain = [Array.isArray(forwardedFor) ? forwardedFor.join(', ') : forwardedFor, clientAddress].filter(Boolean).join(', ');
  if (chain) out['x-forwarded-for'] = chain;
  if (incoming.host) out['x-forwarded-host'] = incoming.host;
  out['x-forwarded-proto'] ??= 'http';
  out.host = upstreamHost;
  return out;
}

export function first(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The Content-Length of an answer the proxy writes whole. An answer without content (RFC 9110
 * §6.4.1: 1xx, 204, 304, any answer to HEAD) gets none of the proxy's: §8.6 forbids one on 1xx
 * and 204, and on 304 and HEAD it is the length of the representation a GET would carry, which
 * only the upstream knows (`upstream`, its own header, passed on as it came).
 */
export function contentLength(method: string | undefined, status: number, bodyBytes: number, upstream?: string): string | undefined {
  if (status < 200 || status === 204) return undefined;
  if (status === 304 || method === 'HEAD') return upstream;
  return String(bodyBytes);
}
