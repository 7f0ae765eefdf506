// An upstream answer over --max-response, passed to the caller as it arrives (docs/proxy.md, an
// answer over --max-response). It is never whole in memory: the upstream is read on only as fast
// as the caller takes the answer, so the proxy holds what it read up to the limit and a piece.
import type { ServerResponse } from 'node:http';
import { endToEnd } from './headers.js';
import type { OversizeResponse } from './upstream.js';

export interface Relayed {
  /** The answer's body length in bytes, as the upstream sent it. */
  bytes: number;
  /** Sends the piece held back and ends the caller's answer. */
  end(): void;
}

/**
 * Writes the upstream's status and end-to-end headers (its Content-Length too: the body passes
 * byte for byte) with `labels`, then the body as it arrives, and resolves once the upstream's
 * answer ended whole. The last piece is held back until `end()`: the caller's answer completes
 * only after the write's outcome was reported, as a whole answer is sent only then, so a caller
 * that has the whole answer and retries at once gets the replay.
 *
 * A caller that leaves does not stop the reading: the rest is read and dropped, so the outcome is
 * still known and recorded. An answer that breaks off (a reset, --timeout) breaks the caller's
 * off too, which then sees no complete answer, as the proxy saw none, and the error is thrown.
 */
export async function relayOversize(res: ServerResponse, answer: OversizeResponse, labels: Record<string, string>): Promise<Relayed> {
  if (!res.destroyed) res.writeHead(answer.status, { ...endToEnd(answer.headers), ...labels });
  let held: Buffer | undefined;
  let bytes = 0;
  try {
    for await (const piece of answer.body) {
      if (held !== undefined && !res.destroyed && !res.write(held)) await drained(res, answer.broken);
      held = piece;
      bytes += piece.length;
    }
  } catch (error) {
    res.destroy();
    throw error;
  }
  return {
    bytes,
    end: () => {
      if (!res.destroyed) res.end(held);
    },
  };
}

/**
 * The caller took what was written, or left, or the upstream's answer broke off meanwhile: a
 * caller that stops reading holds the upstream back only until --timeout, never for ever.
 */
function drained(res: ServerResponse, broken: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      broken.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    broken.addEventListener('abort', done);
    if (broken.aborted) done();
  });
}
