/**
 * Events after the newest signed checkpoint are covered by no signature: whoever can write the
 * database can rewrite and re-chain them, and the log still verifies. That is not tampering
 * (the service signs a checkpoint every 10 s or 1000 events, so a live log nearly always has
 * such a tail), so the verdict stays "intact"; verify warns, so the reader knows what its
 * "intact" covers. Cheap by design: one comparison per account, nothing per event.
 */
import { type VerifierCheckpoint, statedSize } from '../core/checkpoint-trust.js';

/**
 * The largest size among these checkpoints; 0 when there are none. Only asked of an intact
 * account, whose checkpoints all verified: the size each states is the size it signs.
 */
export function largestSignedSize(checkpoints: Iterable<VerifierCheckpoint>): number {
  let largest = 0;
  for (const c of checkpoints) largest = Math.max(largest, statedSize(c) ?? 0);
  return largest;
}

/** The warning for an intact account of `events` events whose newest signed checkpoint has `signed`; null when it covers them all. */
export function unsignedTailWarning(events: number, signed: number): string | null {
  if (events <= signed) return null;
  const range = events === signed + 1 ? `event ${events} is` : `events ${signed + 1}–${events} are`;
  const where = signed === 0 ? 'covered by no signed checkpoint (the account has none)' : `after the newest signed checkpoint (${signed})`;
  return `${range} ${where}: nothing signed covers ${events === signed + 1 ? 'it' : 'them'} yet; ` +
    'a checkpoint saved later (--checkpoint) shows whether they were rewritten';
}
