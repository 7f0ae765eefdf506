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
 * Least recently used out first, bounded in entries and in characters.
 */
export class OpenedPayloads {
  private readonly texts = new Map<string, string>();
  private totalChars = 0;

  /** The payload's JSON text, if kept; a hit becomes the most recently used. */
  get(accountId: string, seq: number): string | undefined {
    const key = keyOf(accountId, seq);
    const text = this.texts.get(key);
    if (text === undefined) return undefined;
    this.texts.delete(key);
    this.texts.set(key, text);
    return text;
  }

  /** Only for an event whose transaction has committed. */
  keep(accountId: string, seq: number, text: string): void {
    if (text.length > MAX_ENTRY_CHARS) return;
    const key = keyOf(accountId, seq);
    if (this.texts.has(key)) return;
    this.texts.set(key, text);
    this.totalChars += text.length;
    while (this.texts.size > MAX_ENTRIES || this.totalChars > MAX_TOTAL_CHARS) {
      const [oldest, oldestText] = this.texts.entries().next().value!;
      this.texts.delete(oldest);
      this.totalChars -= oldestText.length;
    }
  }

  /** Drops every payload of the account (it was shredded): plaintext kept for nothing is not kept. */
  forget(accountId: string): void {
    const prefix = `${accountId}\0`;
    for (const [key, text] of this.texts) {
      if (!key.startsWith(prefix)) continue;
      this.texts.delete(key);
      this.totalChars -= text.length;
    }
  }

  get size(): number {
    return this.texts.size;
  }
}

/** Account ids never hold a NUL, so the key is unambiguous. */
function keyOf(accountId: string, seq: number): string {
  return `${accountId}\0${seq}`;
}
