// URLs as logs and error messages may show them. A URL an operator configures can carry a
// password (`user:password@host`) or a token in its query; neither may ever reach a log.

/**
 * The userinfo of a URL written in text: from the scheme's `//` to the last `@` before the host
 * ends (a raw password may itself hold an `@`).
 */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/** `text` with the `user:password@` of every URL in it taken out. */
export function withoutUserinfo(text: string): string {
  return text.replace(USERINFO, '$1');
}

/** A URL as a log line names it: origin and path, never userinfo, query or fragment. */
export function urlForLog(url: string): string {
  try {
    const parsed = new URL(url);
    // A scheme without an origin (mailto:, data:) puts everything in its path: show the scheme alone.
    return parsed.origin === 'null' ? `${parsed.protocol}…` : `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}
