import type { Middleware } from 'koa';
import { runWithDeadline } from './deadline.js';
import { InFlightSlots, type InFlightLimits } from './load-shedding.js';

export interface AdmissionLimits extends InFlightLimits {
  /** No request is worked on past this (deadline.ts). */
  deadlineMs: number;
  /** The largest request body a route reads (body.ts, through ctx.state.maxBodyBytes). */
  maxBodyBytes: number;
}

/**
 * What the service takes on for a request, decided in one layer before any work is done for it:
 * a slot in flight or `503 overloaded` (load-shedding.ts), the body size routes read, then the
 * work under a deadline and a WorkScope (deadline.ts), the slot held until that work really
 * ends (a request answered at its deadline may still be working).
 *
 * One layer, not three: each Koa middleware layer costs ~3 µs of a replay's ~150 µs of CPU, with
 * or without work of its own (BENCHMARKS.md, ninth session).
 */
export function admissionMiddleware(limits: AdmissionLimits): Middleware {
  const slots = new InFlightSlots(limits);
  // Not async: its promise is the deadline's own, one layer fewer for every request.
  return (ctx, next) => {
    const release = slots.admit(ctx);
    ctx.state.maxBodyBytes = limits.maxBodyBytes;
    return runWithDeadline(ctx, next, limits.deadlineMs, release);
  };
}
