/** A background pass that runs on a timer (the lease sweep, the approval request expiry). */
export interface PeriodicTask {
  /** Stops the timer and waits for a pass in flight, so the store can close under it. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `intervalMs`, never overlapping the previous pass (a tick that finds one
 * still running is skipped); a pass that fails goes to `onError` and the next tick runs as
 * usual. The timer does not keep the process alive.
 */
export function startPeriodicTask(pass: () => Promise<unknown>, onError: (error: unknown) => void, intervalMs: number): PeriodicTask {
  let inFlight: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (inFlight) return;
    inFlight = pass().then(() => undefined, onError).finally(() => {
      inFlight = null;
    });
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await inFlight;
    },
  };
}
