/** RFC 3339 UTC with milliseconds, the ledger's one format: such strings compare in time order. */
const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Where `ts` went backwards in a run of events: the first seq and how many times. */
export interface TsRegressions {
  firstSeq: number | null;
  count: number;
}

/**
 * Watches an account's event times in seq order. An event's `ts` earlier than its
 * predecessor's is not tampering (the hash covers what was written, and the ledger clamps new
 * events so it does not happen), but it is worth a warning: a clock stepped back on a writer,
 * or events written before the clamp existed. A ts not in the ledger's format is not compared:
 * verify checks a header member's type, not its meaning (docs/cli.md, gatehouse verify).
 */
export class TsOrder {
  #last: string | null = null;
  readonly #regressions: TsRegressions = { firstSeq: null, count: 0 };

  note(seq: unknown, ts: unknown): void {
    if (typeof ts !== 'string' || !TS.test(ts)) return;
    if (this.#last !== null && ts < this.#last) this.#regress(typeof seq === 'number' ? seq : null, 1);
    this.#last = ts;
  }

  /** A run checked elsewhere (a worker thread): its first and last ts, and the regressions inside it. */
  noteRun(firstSeq: number, firstTs: string | null, lastTs: string | null, inside: TsRegressions): void {
    if (firstTs !== null) this.note(firstSeq, firstTs);
    if (inside.count > 0) this.#regress(inside.firstSeq, inside.count);
    if (lastTs !== null && TS.test(lastTs)) this.#last = lastTs;
  }

  warning(): string | null {
    const { firstSeq, count } = this.#regressions;
    if (count === 0) return null;
    return `event time goes backwards ${count} time${count === 1 ? '' : 's'} (first at seq ${firstSeq}): a writer's clock was behind an earlier one's`;
  }

  #regress(seq: number | null, count: number): void {
    this.#regressions.firstSeq ??= seq;
    this.#regressions.count += count;
  }
}

/** What a run of rows says of its event times: its first and last ts, and the regressions inside it. */
export interface TsRunSummary {
  firstTs: string | null;
  lastTs: string | null;
  inside: TsRegressions;
}

/**
 * The same watch over a run of rows checked elsewhere (a slice of the parallel verify: seq and
 * ts as stored), taken in pieces for TsOrder.noteRun.
 *
 * A class, not an object of closures made per run: the slice check's optimized code inlines
 * `note` against the function it saw, and a closure made anew for every slice is another
 * function, which deoptimized that code once per slice (BENCHMARKS.md, seventeenth session).
 */
export class TsRun {
  #firstTs: string | null = null;
  #lastTs: string | null = null;
  #inside: TsRegressions = { firstSeq: null, count: 0 };

  note(seq: number, ts: unknown): void {
    if (typeof ts !== 'string' || !TS.test(ts)) return;
    if (this.#firstTs === null) this.#firstTs = ts;
    else if (this.#lastTs !== null && ts < this.#lastTs) {
      this.#inside.firstSeq ??= seq;
      this.#inside.count++;
    }
    this.#lastTs = ts;
  }

  /** The run so far, and a new one from here. */
  take(): TsRunSummary {
    const run = { firstTs: this.#firstTs, lastTs: this.#lastTs, inside: this.#inside };
    this.#firstTs = null;
    this.#lastTs = null;
    this.#inside = { firstSeq: null, count: 0 };
    return run;
  }
}
