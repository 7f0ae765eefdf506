// Calls to the upstream API over keep-alive connections, in two steps for a gated write:
// `open` waits until a connection is established (nothing written yet), so the proxy can report
// `sent` between the connection and the first byte; `send` writes the request and reads the answer:
// whole when it is within --max-response, else its status, headers and the rest still to come.
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { endToEnd, upstreamRequestHeaders } from './headers.js';

/** The connection could not be opened: nothing was written, the write was not made. */
export class UpstreamUnavailable extends Error {}

/** The request left, but no usable answer came back: the write may or may not have happened. */
export class UpstreamUnknown extends Error {
  constructor(message: string, readonly reason: 'reset' | 'timeout' | 'server_error' | 'not_final', readonly upstreamStatus?: number) {
    super(message);
  }
}

/** An answer within --max-response, read whole. */
export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * An answer over --max-response: too large to hold, so never whole in memory. `body` yields the
 * bytes read up to the limit, then the rest as it arrives, and ends only when the answer did;
 * an answer that breaks off or runs past --timeout throws UpstreamUnknown from it.
 */
export interface OversizeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: AsyncIterable<Buffer>;
  /**
   * Aborted, with the UpstreamUnknown as its reason, when the answer breaks off: `body` throws it
   * at its next piece, and this tells one who waits on something else (a slow caller) meanwhile.
   */
  broken: AbortSignal;
  /** Gives the rest of the answer up unread: the connection is dropped. */
  discard(): void;
}

export type UpstreamAnswer = UpstreamResponse | OversizeResponse;

export function isOversize(answer: UpstreamAnswer): answer is OversizeResponse {
  return typeof (answer as OversizeResponse).discard === 'function';
}

export interface UpstreamOptions {
  timeoutMs: number;
  maxResponseBytes: number;
}

export interface OpenCall {
  /** Writes the request and reads the answer: whole, or up to --max-response (OversizeResponse). */
  send(body: Buffer): Promise<UpstreamAnswer>;
  /** Gives the connection up without writing anything. */
  abandon(): void;
}

export class Upstream {
  readonly #base: URL;
  readonly #agent: http.Agent;
  readonly #request: typeof http.request;
  readonly #opts: UpstreamOptions;

  constructor(base: URL, options: UpstreamOptions) {
    this.#base = base;
    this.#opts = options;
    const secure = base.protocol === 'https:';
    // Keep-alive: a write pays for a TCP (and TLS) handshake only when no idle connection is free.
    this.#agent = secure ? new https.Agent({ keepAlive: true, maxSockets: 256 }) : new http.Agent({ keepAlive: true, maxSockets: 256 });
    this.#request = secure ? https.request : http.request;
  }

  /** The upstream path for an incoming path and query: the upstream's own path prefix comes first. */
  target(pathAndQuery: string): string {
    const prefix = this.#base.pathname.replace(/\/+$/, '');
    return prefix + pathAndQuery;
  }

  #requestOptions(method: string, pathAndQuery: string, headers: OutgoingHttpHeaders): http.RequestOptions {
    return {
      agent: this.#agent, protocol: this.#base.protocol, hostname: this.#base.hostname, port: this.#base.port || undefined,
      method, path: this.target(pathAndQuery), headers, setHost: false,
    };
  }

  headersFor(incoming: IncomingMessage): OutgoingHttpHeaders {
    return upstreamRequestHeaders(incoming.headers, this.#base.host, incoming.socket.remoteAddress);
  }

  /** Resolves once a connection to the upstream is open (a kept-alive one or a new one); nothing is written yet. */
  open(method: string, pathAndQuery: string, headers: OutgoingHttpHeaders, bodyLength: number): Promise<OpenCall> {
    const req = this.#request(this.#requestOptions(method, pathAndQuery, { ...headers, 'content-length': String(bodyLength) }));
    const timeoutMs = this.#opts.timeoutMs;
    let phase: 'connecting' | 'open' | 'sending' | 'done' = 'connecting';
    // What a failure means depends on the phase it ends: set by each phase, run at most once.
    let onFailure: (error: Error) => void = () => {};
    // A failure after the connection opened but before `send` (while `sent` was being reported).
    let failedWhileOpen: Error | undefined;
    const finish = () => {
      phase = 'done';
      clearTimeout(timer);
      onFailure = () => {};
    };
    // Every way the call can fail ends here, whoever notices first: an error on the request, the
    // answer's body breaking off (node reports that on the response: once the answer has started,
    // a closed connection raises nothing on the request, and `req.destroy(err)` on an already
    // closed one raises nothing at all), or the timer. Only the first counts; the connection is
    // dropped so nothing half-read goes back to the pool.
    const fail = (error: Error) => {
      if (phase === 'done') return;
      const handler = onFailure;
      finish();
      handler(error);
      req.destroy();
    };
    // Stays for the request's life: a late socket error after the call ended is swallowed, not thrown.
    req.on('error', fail);
    // The one timer covers connection and the whole answer (headers and body) together, as --timeout says.
    const timer = setTimeout(() => fail(new TimeoutError()), timeoutMs);
    const connected = new Promise<void>((resolve, reject) => {
      onFailure = (error) => {
        reject(new UpstreamUnavailable(error instanceof TimeoutError ? `no connection to the upstream within ${timeoutMs} ms` : `the upstream connection could not be opened: ${error.message}`));
      };
      req.once('socket', (socket: Socket) => {
        const secure = this.#base.protocol === 'https:';
        const opened = () => {
          if (phase !== 'connecting') return;
          phase = 'open';
          onFailure = (error) => {
            failedWhileOpen = error;
          };
          resolve();
        };
        if (!socket.connecting && (!secure || (socket as { encrypted?: boolean }).encrypted)) return opened();
        socket.once(secure ? 'secureConnect' : 'connect', opened);
      });
    });
    const unknown = (error: Error) => error instanceof TimeoutError
      ? new UpstreamUnknown(`the upstream did not answer within ${timeoutMs} ms`, 'timeout')
      : error instanceof UpstreamUnknown ? error : new UpstreamUnknown(`the upstream connection failed after the request left: ${error.message}`, 'reset');
    const send = (body: Buffer) => new Promise<UpstreamAnswer>((resolve, reject) => {
      // The call ended while `sent` was being reported: nothing left, but `sent` is on record.
      if (phase !== 'open') return reject(unknown(failedWhileOpen ?? new TimeoutError()));
      phase = 'sending';
      onFailure = (error) => reject(unknown(error));
      // Node takes every 1xx as interim but 101: with an Upgrade it hands the connection over
      // ('upgrade'), without one it hands the 101 over as if it were the answer ('response'). This
      // request asked for no upgrade, so neither is an answer to the write (RFC 9110 §15.2): its
      // fate is unknown, and the connection, speaking who knows what now, is dropped, not pooled.
      const notFinal = (status: number) => fail(new UpstreamUnknown(`the upstream answered ${status}, which is not a final answer`, 'not_final', status));
      req.once('upgrade', (res: IncomingMessage, socket: Socket) => {
        socket.destroy();
        notFinal(res.statusCode ?? 101);
      });
      req.once('response', (res) => {
        if (res.statusCode !== undefined && res.statusCode < 200) return notFinal(res.statusCode);
        const chunks = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        readUpTo(chunks, this.#opts.maxResponseBytes).then((read) => {
          if (phase !== 'sending') return; // the timer or a reset came first and answered already
          const status = res.statusCode ?? 502;
          if (read.whole) {
            finish();
            return resolve({ status, headers: res.headers, body: Buffer.concat(read.chunks) });
          }
          // Over the limit: the call stays open (timer included) while the rest is read.
          let failure: UpstreamUnknown | undefined;
          const broken = new AbortController();
          onFailure = (error) => {
            failure = unknown(error);
            broken.abort(failure);
          };
          resolve({
            status, headers: res.headers, broken: broken.signal,
            body: rest(read.chunks, chunks, (error) => {
              if (error) fail(error);
              else if (phase === 'sending') finish();
              return failure;
            }),
            discard: () => {
              if (phase === 'done') return;
              finish();
              req.destroy();
            },
          });
        }, (error: Error) => fail(error));
      });
      req.end(body);
    });
    return connected.then(() => ({
      send,
      abandon: () => {
        if (phase === 'open' || phase === 'connecting') {
          finish();
          req.destroy();
        }
      },
    }));
  }

  /**
   * An ungated request: streamed both ways, untouched but for hop-by-hop headers. Nothing is
   * buffered or recorded; the upstream's redirects reach the client as they are.
   */
  passThrough(req: IncomingMessage, res: ServerResponse, onFailure: (error: Error) => void): void {
    const out = this.#request(this.#requestOptions(req.method ?? 'GET', req.url ?? '/', withoutLength(this.headersFor(req), req.headers)));
    const timer = setTimeout(() => out.destroy(new TimeoutError()), this.#opts.timeoutMs);
    out.on('error', (error) => {
      clearTimeout(timer);
      if (!res.headersSent) onFailure(error);
      else res.destroy(error);
    });
    out.on('response', (upstreamRes) => {
      clearTimeout(timer);
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, endToEnd(upstreamRes.headers));
      upstreamRes.pipe(res);
      upstreamRes.on('error', (error) => res.destroy(error));
    });
    // A client that goes away takes its upstream request with it: an ungated request records nothing.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** Content-Length travels only when the client declared it; otherwise node streams chunked. */
function withoutLength(headers: OutgoingHttpHeaders, incoming: IncomingHttpHeaders): OutgoingHttpHeaders {
  if (incoming['content-length'] !== undefined) headers['content-length'] = incoming['content-length'];
  return headers;
}

class TimeoutError extends Error {}

/**
 * Reads the answer's body until it ends or passes `maxBytes`, whichever comes first. The
 * iterator is left where it stopped: an answer over the limit is read on from there.
 */
async function readUpTo(chunks: AsyncIterator<Buffer>, maxBytes: number): Promise<{ whole: boolean; chunks: Buffer[] }> {
  const read: Buffer[] = [];
  let total = 0;
  for (;;) {
    const next = await chunks.next();
    if (next.done) return { whole: true, chunks: read };
    read.push(next.value);
    total += next.value.length;
    if (total > maxBytes) return { whole: false, chunks: read };
  }
}

/**
 * The body of an answer over the limit: what was read, then the rest. `settle` ends the call,
 * with the error that broke the body off or none when it ended, and answers the call's failure
 * if it had one: whatever ended the call first (a reset, the timer) is what the body throws.
 */
async function* rest(read: Buffer[], chunks: AsyncIterator<Buffer>, settle: (error?: Error) => UpstreamUnknown | undefined): AsyncGenerator<Buffer> {
  // Let go of each piece read up to the limit once it is passed on: only the caller's pace is held.
  while (read.length > 0) yield read.shift()!;
  for (;;) {
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } catch (error) {
      throw settle(error as Error) ?? error;
    }
    if (next.done) break;
    yield next.value;
  }
  const failure = settle();
  if (failure) throw failure;
}
