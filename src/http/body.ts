import type { Context } from 'koa';
import { JsonInputError, parseStrictJson } from '../core/strict-json.js';
import type { JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';

/** The command may nest 64 deep and sits one level inside the request body. */
const BODY_MAX_DEPTH = 65;

/** Reads the raw body up to the limit, then parses it strictly (untrusted input: every failure is a 4xx). */
export async function readJsonBody(ctx: Context, maxBytes: number): Promise<JsonValue> {
  const bytes = await readRawBody(ctx, maxBytes);
  try {
    return parseStrictJson(bytes, { maxDepth: BODY_MAX_DEPTH });
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
 * A streamed body over the limit is not cut off: closing a socket that still has unread bytes makes
 * the kernel send a reset, and the client would lose the 413 with it. The rest is read and discarded
 * (bounded in time and bytes) while the answer goes out.
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
  if (declared > maxBytes) {
    discardRest(ctx.req);
    return Promise.reject(tooLarge(maxBytes));
  }
  const req = ctx.req;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= maxBytes) return void chunks.push(chunk);
      cleanup();
      discardRest(req);
      reject(tooLarge(maxBytes));
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, total));
    };
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

function discardRest(req: Context['req']): void {
  let discarded = 0;
  const giveUp = setTimeout(() => req.socket.destroy(), DISCARD_MS);
  giveUp.unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_BYTES) req.socket.destroy();
  });
  req.once('end', () => clearTimeout(giveUp));
  req.once('close', () => clearTimeout(giveUp));
  req.resume();
}

function tooLarge(maxBytes: number): DomainError {
  return new DomainError('payload_too_large', `the request body exceeds ${maxBytes} bytes; send a smaller body`);
}
