import { urlForLog, withoutUserinfo } from '../core/url-for-log.js';

/**
 * Why a try did not reach the receiver, as the outbox logs it and keeps it (`last_error`).
 * Node's fetch mostly says "fetch failed" and keeps the reason in `cause`, so the cause is told
 * too; and some of its messages quote the URL whole, password included. Secrets are never
 * logged: the target shows as origin and path only, and no userinfo or the secret is left
 * anywhere in the text, whatever a future message happens to quote.
 */
export function unreachableReason(error: unknown, target: { url: string; secret: string }): string {
  const cause = (error as { cause?: unknown } | null | undefined)?.cause;
  const told = cause instanceof Error ? `${String(error)} (${cause.message})` : String(error);
  return `unreachable: ${redacted(told, target)}`;
}

function redacted(text: string, target: { url: string; secret: string }): string {
  // The URL as configured and as Node writes it back; the longer first, in one pass, so that
  // neither is found again inside what replaced the other.
  const forms = [...new Set([target.url, hrefOf(target.url)])].filter((form) => form !== '').sort((a, b) => b.length - a.length);
  const quoted = forms.length === 0 ? null : new RegExp(forms.map((form) => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  const out = withoutUserinfo(quoted ? text.replace(quoted, () => urlForLog(target.url)) : text);
  return target.secret === '' ? out : out.split(target.secret).join('[secret]');
}

/** The URL as Node writes it back in its messages. */
function hrefOf(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return '';
  }
}
