// How the client reaches Gatehouse: one request out, the whole answer back, or a
// GatehouseTransportError. Two implementations: node:http with a keep-alive pool (the default,
// node-transport.ts) and a `fetch` function the caller hands in (fetch-transport.ts).

export interface TransportRequest {
  method: string;
  /** The path and query after the base URL, e.g. `/v1/operations?idempotency_key=k`. */
  target: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** The whole exchange, connection to the answer's last byte, within this. */
  timeoutMs: number;
  /**
   * The request may be sent a second time without changing what it does: a read, or a write the
   * server recognises as a repeat (a claim by its key, an identical report). Only such a request
   * is sent again when it was lost in a kept-alive connection's close (node-transport.ts).
   */
  repeatable: boolean;
  /** Names the request in error messages: method and path, no query. */
  label: string;
}

export interface TransportResponse {
  status: number;
  /** The body decoded as UTF-8. */
  text: string;
  /** One header as `Headers.get` reads it: any case, repeats joined with ", ", null when absent. */
  header(name: string): string | null;
  /** Every header, built on first use: most answers are read for two headers at most. */
  readonly headers: Headers;
}

export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
  /** Drops idle connections, so a process that is done can exit at once. */
  close(): void;
}
