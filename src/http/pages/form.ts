import type { Context } from 'koa';
import { DomainError } from '../../core/errors.js';
import { readRawBody } from '../body.js';
import { hasNul, NUL_PROBLEM } from '../../core/stored-text.js';

const MAX_FORM_BYTES = 64 * 1024;

/** Reads an application/x-www-form-urlencoded body (untrusted input: size-capped, each field at most once). */
export async function readForm(ctx: Context, limits: { maxBytes?: number; timeoutMs?: number } = {}): Promise<Map<string, string>> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new DomainError('unsupported_media_type', 'send the form as application/x-www-form-urlencoded');
  const body = await readRawBody(ctx, limits.maxBytes ?? MAX_FORM_BYTES, { timeoutMs: limits.timeoutMs });
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    if (fields.has(name)) throw new DomainError('invalid_request', `the form field "${name}" appears twice`);
    if (hasNul(value)) throw new DomainError('invalid_request', `the form field "${name}" ${NUL_PROBLEM}`);
    fields.set(name, value);
  }
  return fields;
}
