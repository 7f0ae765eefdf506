// The upstream's answer as Gatehouse stores it for replays, and back.
//
// A JSON answer is stored as its JSON value, so incident review reads it as JSON. Anything else
// (text, HTML, binary, or JSON the strict parser refuses) is stored as a string, with a marker
// header that replays drop: `gatehouse-body-encoding: text` (UTF-8) or `base64` (bytes, and text
// JSON's escapes would make larger than base64: up to six bytes for one control character).
// Only headers that describe the answer itself are stored: hop-by-hop and per-connection ones
// would be wrong on a replay, and Set-Cookie must never be handed to another caller.
// An answer Gatehouse cannot hold (its JSON form is over the service's body limit) is stored
// without its body, with a header replays keep: `gatehouse-body-omitted: too-large`.
import { parseStrictJson } from '../core/strict-json.js';
import type { JsonValue } from '../core/json.js';
import type { StoredResponse } from '../client/index.js';
import { isJsonMediaType } from './command.js';
import type { UpstreamResponse } from './upstream.js';

const STORED_HEADERS = ['content-type', 'location', 'content-location', 'content-language', 'etag', 'last-modified', 'link'];
const ENCODING = 'gatehouse-body-encoding';
export const BODY_OMITTED = 'gatehouse-body-omitted';

export function toStored(res: UpstreamResponse): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = res.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const stored: StoredResponse = { status: res.status, headers };
  if (res.body.length === 0) return stored;
  const contentType = res.headers['content-type'];
  if (isJsonMediaType(contentType)) {
    try {
      return { ...stored, body: parseStrictJson(res.body) };
    } catch {
      // Not JSON the ledger can hold faithfully: kept as text below.
    }
  }
  const text = res.body.toString('utf8');
  if (Buffer.from(text, 'utf8').equals(res.body) && Buffer.byteLength(JSON.stringify(text)) <= base64Bytes(res.body.length)) {
    return { status: res.status, headers: { ...headers, [ENCODING]: 'text' }, body: text };
  }
  return { status: res.status, headers: { ...headers, [ENCODING]: 'base64' }, body: res.body.toString('base64') };
}

/** The length of `bytes` bytes as a base64 JSON string, quotes included. */
function base64Bytes(bytes: number): number {
  return 4 * Math.ceil(bytes / 3) + 2;
}

/** The answer's status and headers without its body, marked so: a replay says the body was not kept. */
export function withoutBody(stored: StoredResponse): StoredResponse {
  const { [ENCODING]: _encoding, ...headers } = stored.headers ?? {};
  return { status: stored.status, headers: { ...headers, [BODY_OMITTED]: 'too-large' } };
}

/**
 * The headers and body of a stored answer, as a replay sends them. The headers object is the
 * caller's to add to (Content-Length too: whether the answer has one depends on the request's
 * method); a JSON or text body stays a string, which node writes with the headers in one piece.
 */
export function fromStored(stored: StoredResponse): { status: number; headers: Record<string, string>; body: string | Buffer } {
  const headers: Record<string, string> = { ...(stored.headers as Record<string, string> | undefined) };
  const encoding = headers[ENCODING];
  if (encoding !== undefined) delete headers[ENCODING];
  const value: JsonValue | undefined = stored.body;
  let body: string | Buffer;
  if (value === undefined || (value === null && encoding === undefined && !headers['content-type'])) body = '';
  else if (encoding === 'base64' && typeof value === 'string') body = Buffer.from(value, 'base64');
  else if (encoding === 'text' && typeof value === 'string') body = value;
  else {
    body = JSON.stringify(value);
    headers['content-type'] ??= 'application/json';
  }
  return { status: stored.status, headers, body };
}
