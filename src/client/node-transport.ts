// The default transport: node:http / node:https over a keep-alive pool. A gateway calls Gatehouse
// several times per write (claim, sent, completed) and a replay once; a handshake per call, or a
// Request object, web streams and an AbortSignal per call as global fetch has, cost more than the
// call itself on loopback.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { GatehouseTransportError } from './errors.js';
import type { Transport, TransportRequest, TransportResponse } from './transport.js';

/** Connections to one Gatehouse at most; more requests at once wait for a free one (within their timeout). */
const MAX_SOCKETS = 256;

/**
 * Sends of one request lost in kept-alive connections the server had closed. Each such loss
 * takes a dead connection out of the pool, so a few are enough to reach a live or a new one.
 */
const MAX_STALE_CONNECTION_RETRIES = 3;

const MAX_TIMER_MS = 2 ** 31 - 1;

/** How a write to, or read from, a connection the server already closed fails. */
const CLOSED_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE']);

export class NodeTransport implements Transport {
  readonly #agent: http.Agent;
  readonly #request: typeof http.request;
  readonly #hostname: string;
  readonly #port: string;
  /** The Host header: host and port as the base URL has them. */
  readonly #host: string;
  readonly #prefix: string;
  /** A base URL that cannot be used fails each request, as fetch did, not the constructor. */
  readonly #invalid: string | undefined;

  constructor(baseUrl: string) {
    let url: URL | undefined;
    try {
      url = new URL(baseUrl);
    } catch {
      url = undefined;
    }
    const secure = url?.protocol === 'https:';
    this.#invalid = url && (secure || url.protocol === 'http:') ? undefined : `the base URL ${JSON.stringify(baseUrl)} is not an http(s) URL`;
    // Idle connections are unref'd by the agent: they never keep a finished process alive.
    this.#agent = secure ? new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }) : new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
    this.#request = secure ? https.request : http.request;
    this.#hostname = url ? url.hostname.replace(/^\[(.*)\]$/, '$1') : '';
    this.#port = url?.port ?? '';
    this.#host = url?.host ?? '';
    this.#prefix = url ? url.pathname.replace(/\/+$/, '') : '';
  }

  send(request: TransportRequest): Promise<TransportResponse> {
    if (this.#invalid) return Promise.reject(new GatehouseTransportError('network', `${request.label}: ${this.#invalid}`));
    const headers = headerList(request, this.#host);
    const options: http.RequestOptions = {
      agent: this.#agent, hostname: this.#hostname, port: this.#port || undefined,
      method: request.method, path: this.#prefix + request.target, headers,
    };
    return new Promise<TransportResponse>((resolve, reject) => {
      let settled = false;
      let current: http.ClientRequest | undefined;
      const settle = (error: GatehouseTransportError | undefined, response?: TransportResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(response!);
      };
      const fail = (err: Error) => settle(new GatehouseTransportError('network', `${request.label}: ${err.message}`, { cause: err }));
      // One clock for the whole exchange, retries included: the caller's timeout is what it waits at
      // most. Past what a timer can hold (about 24.8 days) setTimeout would fire at once: no clock.
      const timer = request.timeoutMs <= MAX_TIMER_MS ? setTimeout(() => {
        settle(new GatehouseTransportError('timeout', `${request.label}: no answer within ${request.timeoutMs} ms`));
        current?.destroy();
      }, request.timeoutMs) : undefined;

      let retries = 0;
      const attempt = () => {
        const req = this.#request(options);
        current = req;
        let answered = false;
        req.on('error', (err: NodeJS.ErrnoException) => {
          if (settled) return;
          if (!answered && request.repeatable && req.reusedSocket && CLOSED_CONNECTION_CODES.has(err.code ?? '')
            && retries < MAX_STALE_CONNECTION_RETRIES) {
            // A kept-alive connection that the server closed as this request went out on it (its
            // idle timeout, a restart, a proxy in between). TCP cannot tell that apart from a
            // server that read the request and died before answering, so "it never went out" is
            // only ever a guess: the request is sent again only when sending it twice is harmless
            // (TransportRequest.repeatable). A claim is: Gatehouse keys it by the Idempotency-Key,
            // so if the first one did land, the second one finds that operation and answers what
            // it is (in_progress, replayed, ...), never a second lease for a second write: the
            // same answer the Executor gets when it retries a claim whose answer was lost. An
            // identical report answers as the first one did and records nothing. Anything else
            // becomes a network error, and the caller asks by key, as after any lost answer.
            retries++;
            return attempt();
          }
          fail(err);
        });
        req.on('response', (res: IncomingMessage) => {
          answered = true;
          readAnswer(res, (err, text) => {
            if (err) return fail(err);
            settle(undefined, new NodeAnswer(res, text!));
          });
        });
        req.end(request.body);
      };
      attempt();
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** The whole body as UTF-8 text; a connection cut before its end is an error, not a short answer. */
function readAnswer(res: IncomingMessage, done: (err: Error | undefined, text?: string) => void): void {
  const chunks: Buffer[] = [];
  let length = 0;
  let ended = false;
  res.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    length += chunk.length;
  });
  res.on('error', (err) => done(err));
  res.on('end', () => {
    ended = true;
    done(undefined, utf8(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length)));
  });
  res.on('close', () => {
    if (!ended) done(Object.assign(new Error('the connection closed before the answer\'s end'), { code: 'ECONNRESET' }));
  });
}

/** Decoded as fetch's `text()` does: invalid bytes become U+FFFD, a leading byte-order mark is dropped. */
function utf8(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The request's headers as a flat [name, value, …] list, which node writes as it is, without the
 * bookkeeping it keeps per header for a headers object (the names here are the client's own).
 * Host comes from the base URL unless the caller set one; Content-Length is always the body's.
 */
function headerList(request: TransportRequest, host: string): string[] {
  const list: string[] = [];
  let hostGiven = false;
  for (const name in request.headers) {
    const lower = name.toLowerCase();
    if (lower === 'content-length') continue;
    if (lower === 'host') hostGiven = true;
    list.push(name, request.headers[name]!);
  }
  if (!hostGiven) list.push('host', host);
  if (request.body !== undefined) list.push('content-length', String(Buffer.byteLength(request.body)));
  return list;
}

/** The answer as received; its Headers object is made only if someone asks for all of them. */
class NodeAnswer implements TransportResponse {
  readonly status: number;
  readonly text: string;
  readonly #raw: string[];
  #headers: Headers | undefined;

  constructor(res: IncomingMessage, text: string) {
    this.status = res.statusCode ?? 0;
    this.text = text;
    this.#raw = res.rawHeaders;
  }

  header(name: string): string | null {
    return headerIn(this.#raw, name);
  }

  get headers(): Headers {
    return (this.#headers ??= headersOf(this.#raw));
  }
}

/** One header from the raw list as `Headers.get` reads it: any case, repeats joined with ", ". */
function headerIn(raw: string[], name: string): string | null {
  const wanted = name.toLowerCase();
  let value: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === wanted.length && raw[i]!.toLowerCase() === wanted) {
      value = value === null ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
    }
  }
  return value;
}

/** Every header as received, repeats kept, so `get` joins them as fetch's Headers does. */
function headersOf(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}
