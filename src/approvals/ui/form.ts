import type { Context } from 'koa';
import { AppError } from '../../http/errors.js';
import { readRawBody } from '../../http/body.js';

const MAX_FORM_BYTES = 64 * 1024;

/** Reads an application/x-www-form-urlencoded body (untrusted input: size-capped, each field at most once). */
export async function readForm(ctx: Context): Promise<Map<string, string>> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new AppError('unsupported_media_type', 'send the form as application/x-www-form-urlencoded');
  const body = await readRawBody(ctx, MAX_FORM_BYTES);
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    if (fields.has(name)) throw new AppError('invalid_request', `the form field "${name}" appears twice`);
    fields.set(name, value);
  }
  return fields;
}
