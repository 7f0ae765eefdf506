import type http from 'node:http';

/**
 * An error answered on Node's response itself, for the answers made before Koa or without it
 * (the connection bound, a request without Host, the bare metrics listener): JSON as every error
 * is (docs/http-api.md, Errors), with its length, and `headers` (Retry-After, Connection: close).
 */
export function writeJsonError(res: http.ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers }).end(body);
}
