import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../core/errors.js';
import { ERROR_STATUS } from './error-status.js';
import { writeJsonError } from './json-error.js';

/**
 * Requests Node's HTTP parser refuses never reach Koa: a header name that is not a token, a
 * control byte in a header value, Content-Length together with Transfer-Encoding (a request
 * smuggling shape), headers past Node's 16 KiB, a request that did not arrive in time. Node's
 * own answer to them is a bare status line without a body; every error of the service is JSON,
 * so these are answered here, with the codes of the error table, and the connection closed (the
 * parser cannot go on reading it).
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (error: Error & { code?: string; reason?: string }, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
    // The parser reports every later chunk of a refused request again: it is answered once.
    if (socket.writableEnded || socket.destroyed) return;
    // Only while nothing of another answer was written: bytes after a partial answer would corrupt it.
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) return void socket.destroy();
    // Closed in stages (RFC 9112 §9.6): the answer and a FIN now, the socket a little later. Closing
    // it while the client's bytes still arrive would send a reset, which can erase the answer.
    socket.end(ANSWERS.get(error.code ?? '') ?? badRequest(error.reason));
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  });
}

/** Long enough for the answer to cross any network a client is on; the client closes first, as a rule. */
const LINGER_MS = 2_000;

function answer(code: ErrorCode, message: string): Buffer {
  const status = ERROR_STATUS[code];
  const body = JSON.stringify({ error: { code, message } });
  return Buffer.from(`HTTP/1.1 ${status} ${REASON[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`
    + `cache-control: no-store\r\nconnection: close\r\n\r\n${body}`);
}

const REASON: Readonly<Record<number, string>> = { 400: 'Bad Request', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

/** `reason` is llhttp's fixed text ("Invalid header value char"), never bytes of the request. */
function badRequest(reason: string | undefined): Buffer {
  return answer('invalid_request', `the request is not well-formed HTTP/1.1${reason ? `: ${reason}` : ''}`);
}

/** Node's parser errors that are not a malformed request, by its error code; the answers are built once. */
const ANSWERS = new Map<string, Buffer>([
  ['HPE_HEADER_OVERFLOW', answer('headers_too_large', `the request line and headers exceed ${http.maxHeaderSize} bytes`)],
  ['HPE_CHUNK_EXTENSIONS_OVERFLOW', answer('payload_too_large', 'the chunk extensions of the request body are too large')],
  // Node's headersTimeout and requestTimeout: as the sign-in form's late body, 400 and closed.
  ['ERR_HTTP_REQUEST_TIMEOUT', answer('invalid_request', 'the request did not arrive in time')],
]);

/**
 * An HTTP/1.1 request without a Host header (RFC 9112 §3.2: 400). Node refuses it itself with an
 * empty 400 unless told not to (`requireHostHeader: false`, server.ts); it is answered here
 * instead, with the JSON every other error carries. True when it was answered.
 */
export function refusedWithoutHost(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if (req.httpVersion !== '1.1' || req.headers.host !== undefined) return false;
  writeJsonError(res, ERROR_STATUS.invalid_request, 'invalid_request', 'an HTTP/1.1 request must carry a Host header', { 'cache-control': 'no-store', connection: 'close' });
  return true;
}
