/** Keys remembered per generation; two generations are kept, so between this and twice as many in all. */
const GENERATION_SIZE = 50_000;

/**
 * Idempotency keys this instance has recently seen taken, as a hint for the next claim with one
 * of them. A claim inserts first and looks its key up only when the unique constraint says it is
 * taken: the cheapest order for a new key, the dearest for a retry, which then builds a row, a
 * lease and an event only to have the insert refused (~20 µs of a replay's ~140 µs in-process,
 * bench/claim-path.ts). Retries come soon after their claim, usually to the same instance, so a
 * key seen here is looked up first.
 *
 * Only ever a hint: a key remembered here whose claim did not commit is found missing and
 * inserted; a key another instance took is found by the insert, as without the hint.
 */
export class KnownKeys {
  private young = new Set<string>();
  private old = new Set<string>();

  has(accountId: string, idempotencyKey: string): boolean {
    const key = entry(accountId, idempotencyKey);
    return this.young.has(key) || this.old.has(key);
  }

  remember(accountId: string, idempotencyKey: string): void {
    if (this.young.size >= GENERATION_SIZE) {
      this.old = this.young;
      this.young = new Set();
    }
    this.young.add(entry(accountId, idempotencyKey));
  }
}

/** Account ids are letters, digits, '.', '_' and '-' (principals/accounts.ts), so the pair is unambiguous. */
function entry(accountId: string, idempotencyKey: string): string {
  return `${accountId}\0${idempotencyKey}`;
}
