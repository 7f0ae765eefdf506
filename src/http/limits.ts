// No imports: `serve` reads these for its --help before it loads Koa and the drivers.

/**
 * The defaults of `serve`. 10 s is the contract's deadline. 256 requests in flight keep two
 * cores busy with room to spare (a claim is a few milliseconds of CPU; group commit needs a
 * crowd); one client may hold half of them, so a flood from one leaves room for the rest while a
 * gateway that holds one key for many agents (the usual MCP gateway) still gets most of the service.
 * 4,000 connections stay well below a usual descriptor limit of 65,536 and above any sane
 * gateway pool.
 */
export const DEFAULT_LIMITS = { requestDeadlineMs: 10_000, maxInFlight: 256, maxInFlightPerClient: 128, maxConnections: 4_000 } as const;
