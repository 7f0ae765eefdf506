/** Limits on what is kept, in entries and in characters of JSON text (a V8 string takes one or two bytes each). */
const MAX_ENTRIES = 10_000;
const MAX_TOTAL_CHARS = 16 * 1024 * 1024;
/** A larger payload is opened again each time: one of them would push out hundreds of small ones. */
const MAX_ENTRY_CHARS = 64 * 1024;

/**
 * Payloads of committed events, already decrypted, by account and seq: every replay of a finished
 * operation opens the same stored response, and reading and decrypting it again was a sixth of a
 * replay's CPU (BENCHMARKS.md, thirteenth session).
 *
 * Sound because a committed event never changes (the events table refuses UPDATE and DELETE) and
 * only committed ones are kept: the ledger adds an entry after its transaction's COMMIT, never
 * before, since a batch that rolls back frees its seqs for other events. It holds no authority of
 * its own: the ledger asks for the account's data key before every hit, so a shredded account's
 * payloads stop being served exactly when they would stop opening (the data key cache's 4 s across
 * instances), and its entries are dropped then.
 *
 * Bounded in entries and in characters; what goes first is the oldest entry not used since it
 * was last passed over (a second chance, as in CLOCK): near enough to least recently used, and a
 * hit only sets a flag. Moving the entry to the end of the Map on every hit, as this did, made a
 * long-lived Map rehash every few dozen replays, and V8 keeps a rehashed table, entries and all,
 * until the next full GC (src/http/server.ts, closingWhen).
 */
export class OpenedPayloads {
  private readonly entries = new Map<string, Entry>();
  private totalChars = 0;

  /** The payload's JSON text, if kept; a hit marks it used. */
  get(accountId: string, seq: number): string | undefined {
    const entry = this.entries.get(keyOf(accountId, seq));
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.text;
  }

  /** Only for an event whose transaction has committed. */
  keep(accountId: string, seq: number, text: string): void {
    if (text.length > MAX_ENTRY_CHARS) return;
    const key = keyOf(accountId, seq);
    if (this.entries.has(key)) return;
    this.entries.set(key, { text, used: false });
    this.totalChars += text.length;
    while (this.entries.size > MAX_ENTRIES || this.totalChars > MAX_TOTAL_CHARS) {
      const [oldestKey, oldest] = this.entries.entries().next().value!;
      this.entries.delete(oldestKey);
      if (oldest.used) {
        // Its second chance: to the back, unmarked. Each entry moves at most once per pass.
        oldest.used = false;
        this.entries.set(oldestKey, oldest);
        continue;
      }
      this.totalChars -= oldest.text.length;
    }
  }

  /** Drops every payload of the account (it was shredded): plaintext kept for nothing is not kept. */
  forget(accountId: string): void {
    const prefix = `${accountId}\0`;
    for (const [key, entry] of this.entries) {
      if (!key.startsWith(prefix)) continue;
      this.entries.delete(key);
      this.totalChars -= entry.text.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

interface Entry {
  readonly text: string;
  /** Hit since it was kept or last passed over. */
  used: boolean;
}

/** Account ids never hold a NUL, so the key is unambiguous. */
function keyOf(accountId: string, seq: number): string {
  return `${accountId}\0${seq}`;
}
