import type { Context, Next } from 'koa';
import { DomainError } from '../core/errors.js';
import { WorkScope } from '../store/work-scope.js';

/**
 * No request outlives its deadline, and no request runs for a client that is gone.
 *
 * Each request has a WorkScope (src/store/work-scope.ts; `workScopeOf`), which its handler passes
 * with every unit of work it hands the store. When its client closes the
 * connection before the answer, the scope is abandoned: a unit of work not started yet is not
 * run, one not yet at COMMIT is rolled back. When the deadline passes first, the scope is
 * abandoned the same way and the client is answered at once with a 503:
 *
 * - `store_unavailable` when the request was waiting on or working in the store, else `overloaded`
 *   — but a request whose body had not all arrived is the client's: `400 invalid_request`;
 * - the message says whether anything can still have been written. The abandonment and the check
 *   "did a unit of this request send COMMIT" happen in one synchronous step, and a unit marks itself
 *   committing in one synchronous step with its own check, so "nothing was written" is certain when
 *   said. When a COMMIT was already on its way, the answer says the request may have taken effect
 *   and that a retry with the same idempotency key tells which (a committed claim answers
 *   `in_progress`, and the operation turns `unknown` if nobody reports on its lease) — it is never
 *   reported as not done.
 *
 * `next` is the rest of the request's work; admission.ts runs it this way, in its one layer.
 * `onWorkEnded` is called once that work really ends, which may be after the deadline answered.
 */
export function runWithDeadline(ctx: Context, next: Next, deadlineMs: number, onWorkEnded: () => void): Promise<void> {
  const scope = new WorkScope();
  ctx.state.workScope = scope;
  const onClose = () => {
    if (!ctx.res.writableFinished) scope.abandon('client_gone');
  };
  ctx.res.once('close', onClose);
  // The client's FIN reaches us as the socket's 'end'. Node's server then ends the connection
  // (httpAllowHalfOpen is off), so no answer can reach that client any more: the request is
  // abandoned then, not at the response's 'close', which comes in a later phase of the event
  // loop — after a SQLite batch, which runs to its COMMIT without yielding, may have committed
  // the work of a client that left while the process was stopped (BENCHMARKS.md, twenty-ninth
  // session). A FIN read before the request reached us has ended the socket already.
  const socket = ctx.req.socket;
  if (socket.readableEnded) onClose();
  else socket.once('end', onClose);
  const work = next();
  // One promise settled by whichever comes first, the work or the timer (not a Promise.race of
  // two: a replay's whole answer costs ~100 µs, and the race's promises were a share of it). The
  // work may fail after the deadline answered; that failure has no one left to tell. The
  // request's slot in flight (admission.ts) is held until the work really ends.
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      ctx.res.off('close', onClose);
      socket.off('end', onClose);
      reject(deadlineRefusal(ctx, scope, deadlineMs));
    }, deadlineMs - deadlineMargin(deadlineMs));
    const ended = () => {
      onWorkEnded();
      clearTimeout(timer);
      ctx.res.off('close', onClose);
      socket.off('end', onClose);
    };
    work.then(() => {
      ended();
      resolve();
    }, (error: unknown) => {
      ended();
      reject(error);
    });
  });
}

/**
 * How much earlier than the deadline the timer fires: the answer must reach the client within
 * it, and the timer starts once the request is parsed and fires late by the event loop's lag, so
 * a storm of requests at a dead store was answered 10,014–10,162 ms after the client sent them
 * (a black-box drill, 10-s deadline). 250 ms, or a twentieth of a short deadline.
 */
export function deadlineMargin(deadlineMs: number): number {
  return Math.min(250, Math.floor(deadlineMs / 20));
}

/** The deadline passed first: the scope is abandoned, and the answer says whether anything can have been written. */
function deadlineRefusal(ctx: Context, scope: WorkScope, deadlineMs: number): DomainError {
  const { mayHaveWritten, storeBusy } = scope.abandon('deadline');
  const seconds = Math.round(deadlineMs / 100) / 10;
  if (!ctx.req.complete && !storeBusy && !mayHaveWritten) {
    // The body is still on its way: the client stalled, not the service. Its connection is
    // closed after the answer, so bytes that come later are never read as another request.
    ctx.set('connection', 'close');
    return new DomainError('invalid_request', `the request body did not arrive within the ${seconds} s deadline; nothing of it was written: send the body whole`,
      {}, { cause: 'deadline' });
  }
  const outcome = mayHaveWritten
    ? 'it may still have taken effect: retry with the same idempotency key to learn its outcome'
    : 'nothing of it was written: retry later';
  return new DomainError(storeBusy ? 'store_unavailable' : 'overloaded',
    `the request did not finish within the ${seconds} s deadline (${storeBusy ? 'the store did not answer in time' : 'the service is too busy'}); ${outcome}`,
    {}, { cause: 'deadline' });
}

/** The request's WorkScope, for every unit of work its handler hands the store. */
export function workScopeOf(ctx: Context): WorkScope {
  return ctx.state.workScope as WorkScope;
}
