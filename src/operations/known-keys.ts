import type { OperationRow } from './operation-json.js';

/** Keys remembered per generation; two generations are kept, so between this and twice as many in all. */
const GENERATION_SIZE = 50_000;
/** Finished rows remembered per generation (each ~1 KiB): at most twice this many are held. */
const FINISHED_GENERATION_SIZE = 5_000;

/** What this instance knows of a key: nothing, that it was taken, or the finished row it names. */
export type KnownKey = undefined | 'taken' | OperationRow;

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
 *
 * A finished operation's row (succeeded or failed) is kept whole, once the transaction that read
 * it has committed: no transition leaves those states (transitions.ts) and no operation is ever
 * deleted, so the row is what any later read would return, on every instance. Its replays answer
 * from it without reading it again (BENCHMARKS.md, fourteenth session).
 */
export class KnownKeys {
  private readonly keys = new Generations<true>(GENERATION_SIZE);
  private readonly finished = new Generations<OperationRow>(FINISHED_GENERATION_SIZE);

  lookup(accountId: string, idempotencyKey: string): KnownKey {
    const key = entry(accountId, idempotencyKey);
    return this.finished.get(key) ?? (this.keys.get(key) ? 'taken' : undefined);
  }

  remember(accountId: string, idempotencyKey: string): void {
    this.keys.set(entry(accountId, idempotencyKey), true);
  }

  /** Only a committed row, and only one in a state nothing leaves (isFinal). Frozen: every later replay shares it. */
  rememberFinished(row: OperationRow): void {
    if (isFinal(row.state)) this.finished.set(entry(row.account_id, row.idempotency_key), Object.freeze(row));
  }
}

/** Succeeded and failed have no outgoing transition; canceled does (a retry re-leases it), so it is not final. */
function isFinal(state: string): boolean {
  return state === 'succeeded' || state === 'failed';
}

/** A map that forgets its oldest half at a time: no per-entry bookkeeping on the hot path. */
class Generations<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();

  constructor(private readonly generationSize: number) {}

  get(key: string): V | undefined {
    return this.young.get(key) ?? this.old.get(key);
  }

  set(key: string, value: V): void {
    if (this.young.size >= this.generationSize) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }
}

/** Account ids are letters, digits, '.', '_' and '-' (principals/accounts.ts), so the pair is unambiguous. */
function entry(accountId: string, idempotencyKey: string): string {
  return `${accountId}\0${idempotencyKey}`;
}
