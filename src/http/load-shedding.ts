import type { Context } from 'koa';
import { DomainError } from '../core/errors.js';

export interface InFlightLimits {
  /** Requests being worked on at once, over every client. */
  maxInFlight: number;
  /** Requests being worked on at once for one client (one API key, else one address). */
  maxInFlightPerClient: number;
}

/**
 * Sheds load before any work is done for it: past the bound on requests in flight the answer is
 * `503 overloaded` with Retry-After, sent before the body is read or parsed (Node then discards
 * the rest of the body as it arrives, which costs no parsing). A flood from one client fills its own share, not the
 * whole service: another client still finds room and is answered normally.
 *
 * A client is its Authorization header (not checked: checking costs a lookup, and a forged key
 * only buys the forger a share of its own) or, without one, its address (the sign-in form's
 * callers), each counted in a map of its own so that no header can share an address's count.
 * The header itself is the key, not a digest of it: an entry lives only while its client has a
 * request in flight, when the header is in memory anyway, and a SHA-256 per request here took
 * 2.2 % of the server's time under replays, more than the event's own hash (BENCHMARKS.md,
 * twenty-seventh session).
 * Admission (admission.ts) takes a slot for each request before anything else is done for it.
 */
export class InFlightSlots {
  private inFlight = 0;
  /** Requests in flight by Authorization header, and by address for requests without one. */
  private readonly perKey = new Map<string, number>();
  private readonly perAddress = new Map<string, number>();

  constructor(private readonly limits: InFlightLimits) {}

  /** A slot for the request, or `overloaded`; the function returned gives it back (once). */
  admit(ctx: Context): () => void {
    const { limits } = this;
    const authorization = ctx.get('authorization');
    const perClient = authorization ? this.perKey : this.perAddress;
    const client = authorization || ctx.ip;
    const mine = perClient.get(client) ?? 0;
    if (this.inFlight >= limits.maxInFlight || mine >= limits.maxInFlightPerClient) {
      throw new DomainError('overloaded', this.inFlight >= limits.maxInFlight
        ? 'the service is at its bound on work in flight; retry after the Retry-After delay'
        : 'this client is at its bound on requests in flight; wait for answers before sending more');
    }
    this.inFlight++;
    perClient.set(client, mine + 1);
    return () => {
      this.inFlight--;
      const left = (perClient.get(client) ?? 1) - 1;
      if (left <= 0) perClient.delete(client);
      else perClient.set(client, left);
    };
  }
}
