// The transport through a `fetch` function the caller hands in (GatehouseClientOptions.fetch):
// a seam for tests and for runtimes with their own fetch. Nothing is sent twice here; what the
// fetch implementation does with its connections is its own business.
import { GatehouseTransportError } from './errors.js';
import type { Transport, TransportRequest, TransportResponse } from './transport.js';

export class FetchTransport implements Transport {
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch;

  constructor(baseUrl: string, fetchFn: typeof fetch) {
    this.#baseUrl = baseUrl;
    this.#fetch = fetchFn;
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const signal = AbortSignal.timeout(request.timeoutMs);
    try {
      const res = await this.#fetch(this.#baseUrl + request.target, { method: request.method, headers: request.headers, body: request.body, signal });
      // The body is part of the answer: a connection cut while it streams is a transport failure.
      const text = await res.text();
      return { status: res.status, text, header: (name) => res.headers.get(name), headers: res.headers };
    } catch (err) {
      throw toTransportError(err, request);
    }
  }

  close(): void {}
}

function toTransportError(err: unknown, request: TransportRequest): GatehouseTransportError {
  const name = err instanceof Error ? err.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new GatehouseTransportError('timeout', `${request.label}: no answer within ${request.timeoutMs} ms`, { cause: err });
  }
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  const message = err instanceof Error ? err.message : String(err);
  return new GatehouseTransportError('network', `${request.label}: ${message}${cause}`, { cause: err });
}
