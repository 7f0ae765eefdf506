import { UsageError } from './output.js';

/**
 * A URL flag's value (proxy --upstream, --gatehouse, --public-url; serve --public-url), checked
 * one way for every verb: an absolute http(s) URL, with no query or fragment (a base other paths
 * are put after), and no user name or password: fetch refuses to send to such a URL, Node's
 * http.request would drop them unsaid, and a link people open must not carry them.
 */
export function urlOption(flag: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag} must be an http(s) URL, not ${JSON.stringify(value)}`);
  }
  if (url.username !== '' || url.password !== '') throw new UsageError(`${flag} takes no user name or password (user:password@ before the host)`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${flag} must be an http(s) URL, not ${JSON.stringify(value)}`);
  if (url.search || url.hash) throw new UsageError(`${flag} takes no query or fragment`);
  return url;
}
