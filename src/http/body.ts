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

/** The request body's bytes, refused with 413 as soon as it passes `maxBytes` (declared or streamed). */
export async function readRawBody(ctx: Context, maxBytes: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      ctx.req.destroy();
      throw tooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

function tooLarge(maxBytes: number): DomainError {
  return new DomainError('payload_too_large', `the request body exceeds ${maxBytes} bytes; send a smaller body`);
}

/** `1mb` style sizes for --max-body: k/kb = KiB, m/mb = MiB. */
export function parseByteSize(text: string): number {
  const match = /^(\d+)\s*(b|k|kb|m|mb|g|gb)?$/i.exec(text.trim());
  if (!match) throw new Error(`cannot read the size "${text}": use a number of bytes or a unit like 512kb or 1mb`);
  const unit = (match[2] ?? 'b').toLowerCase()[0];
  const factor = unit === 'g' ? 1024 ** 3 : unit === 'm' ? 1024 ** 2 : unit === 'k' ? 1024 : 1;
  return Number(match[1]) * factor;
}
