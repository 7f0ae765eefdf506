/**
 * The one failure a verdict names (`TAMPERED at seq N`, docs/cli.md#gatehouse-verify). Every check of the
 * verifier keeps running after a failure, so that counts stay meaningful, and reports each
 * failure here; this keeps the one with the smallest seq. A secondary failure (an untrusted
 * checkpoint, a data key that does not unwrap) says nothing about a particular event, so it
 * ranks after any failure found in the log itself; between equals the first reported stays.
 */
interface Failure {
  seq: number;
  reason: string;
  secondary: boolean;
}

export class FirstFailure {
  #failure: Failure | null = null;

  report(seq: number, reason: string, secondary = false): void {
    const f = this.#failure;
    if (f === null || (f.secondary && !secondary) || (f.secondary === secondary && seq < f.seq)) this.#failure = { seq, reason, secondary };
  }

  get seq(): number | null {
    return this.#failure?.seq ?? null;
  }

  get reason(): string | null {
    return this.#failure?.reason ?? null;
  }
}
