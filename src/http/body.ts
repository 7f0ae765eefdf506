import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { JsonInputError, parseStrictJson } from '../core/strict-json.js';
import type { JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';

/**
 * How deep a request body may nest. The command may nest 64 deep (docs/http-api.md: bodies) and sits one
 * level inside a claim's body; a response body sits two levels inside a report's or a resolve's
 * (`{"response": {"body": …}}`), and may nest as deep as a command, so that a response echoing
 * a command can always be recorded (one that could not would leave its operation `unknown`).
 */
export const BODY_DEPTH = { command: 65, response: 66 } as const;

/** Reads the raw body up to the limit, then parses it strictly (untrusted input: every failure is a 4xx). */
export async function readJsonBody(ctx: Context, maxBytes: number, maxDepth: number = BODY_DEPTH.command): Promise<JsonValue> {
  const bytes = await readRawBody(ctx, maxBytes);
  try {
    return parseStrictJson(bytes, { maxDepth });
  } catch (error) {
    if (error instanceof JsonInputError) throw new DomainError(error.code, error.message);
    throw error;
  }
}

/** How long, and how much, an over-limit body is read and thrown away so that the 413 arrives as an answer. */
const DISCARD_MS = 10_000;
const DISCARD_BYTES = 64 * 1024 * 1024;

/**
 * The request body's bytes, refused with 413 as soon as it passes `maxBytes` (declared or streamed).
 * The rest of a body over the limit is never parsed as a request: the 413 closes the connection
 * (a client that sent more than it declared would otherwise have its bytes read as the next
 * request). It closes in stages (RFC 9112 §9.6): closing a socket that still has unread bytes
 * makes the kernel send a reset, and the client would lose the 413 with it. So the 413 goes out
 * at once, the rest is read and discarded (bounded in time and bytes), and only then does the
 * answer end and the connection close (`setErrorBody`).
 *
 * With `timeoutMs`, a body that has not fully arrived by then is refused with 400 and its
 * connection closed after the answer: a client that trickles bytes holds nothing for long.
 */
export async function readRawBody(ctx: Context, maxBytes: number, options: { timeoutMs?: number } = {}): Promise<Buffer> {
  if (options.timeoutMs === undefined) return readAllOf(ctx, maxBytes);
  const reading = readAllOf(ctx, maxBytes);
  // Past the timeout the read goes on until the connection closes; its end has no one to tell.
  reading.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctx.set('connection', 'close');
      reject(new DomainError('invalid_request', `the request body did not arrive within ${Math.ceil(options.timeoutMs! / 1000)} s`));
    }, options.timeoutMs);
  });
  try {
    return await Promise.race([reading, late]);
  } finally {
    clearTimeout(timer);
  }
}

function readAllOf(ctx: Context, maxBytes: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > maxBytes) return Promise.reject(refuseTooLarge(ctx, maxBytes));
  const req = ctx.req;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) return void chunks.push(chunk);
      cleanup();
      reject(refuseTooLarge(ctx, maxBytes));
    };
    // Once the body has ended its listeners stay (an event after 'end' only meets a settled
    // promise), and a body that came in one chunk is that chunk, not a copy of it: removing
    // three listeners and copying were a measurable share of the HTTP edge (BENCHMARKS.md,
    // twenty-seventh session).
    const onEnd = () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** Reads and throws away the rest of the body; settles when it has ended, or when the socket is closed (past the bounds, it is). */
function discardRest(req: Context['req']): Promise<void> {
  let discarded = 0;
  const giveUp = setTimeout(() => req.socket.destroy(), DISCARD_MS);
  giveUp.unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_BYTES) req.socket.destroy();
  });
  const ended = new Promise<void>((resolve) => {
    req.once('end', resolve);
    req.once('close', resolve);
  }).finally(() => clearTimeout(giveUp));
  req.resume();
  return ended;
}

function refuseTooLarge(ctx: Context, maxBytes: number): DomainError {
  ctx.set('connection', 'close');
  ctx.state.bodyDiscarded = discardRest(ctx.req);
  return new DomainError('payload_too_large', `the request body exceeds ${maxBytes} bytes; send a smaller body`);
}

/**
 * Sets the body of an error answer. While the request's body is still being discarded (a 413),
 * the answer is sent at once but ends only once the discard has: Node closes the connection at
 * the answer's end, and the bytes still coming would then be answered with a reset.
 */
export function setErrorBody(ctx: Context, answer: object): void {
  const discarding = ctx.state.bodyDiscarded as Promise<void> | undefined;
  if (!discarding) {
    ctx.body = answer;
    return;
  }
  const bytes = Buffer.from(JSON.stringify(answer));
  const stream = new Readable({ read() {} });
  stream.push(bytes);
  void discarding.then(() => stream.push(null));
  ctx.body = stream;
  ctx.length = bytes.length;
}
