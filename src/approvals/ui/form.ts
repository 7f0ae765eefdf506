import type { Context } from 'koa';
import { AppError } from '../../http/errors.js';

const MAX_FORM_BYTES = 64 * 1024;

/** Reads an application/x-www-form-urlencoded body (untrusted input: size-capped, each field at most once). */
export async function readForm(ctx: Context): Promise<Map<string, string>> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new AppError('unsupported_media_type', 'send the form as application/x-www-form-urlencoded');
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_FORM_BYTES) {
      ctx.req.destroy();
      throw new AppError('payload_too_large', `the form exceeds ${MAX_FORM_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) {
    if (fields.has(name)) throw new AppError('invalid_request', `the form field "${name}" appears twice`);
    fields.set(name, value);
  }
  return fields;
}
