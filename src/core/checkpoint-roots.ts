/**
 * Trusted checkpoints against the log's RFC 6962 Merkle root at their sizes. A checkpoint can
 * only be compared with the log at its own size, and the verifier never holds the log, so this
 * keeps just what the comparisons need: the checkpoints ahead of the log, by size, and the
 * roots at sizes announced in advance (32 bytes each). ChainVerifier appends each event to the
 * frontier and then calls reached(); see its header for the order a reader must feed them in.
 *
 * Outcomes wait for finish: a mismatch is reported with the range the change must lie in,
 * which takes every match below it.
 */
import type { TrustedCheckpoint } from './checkpoint-trust.js';
import type { FirstFailure } from './first-failure.js';
import type { MerkleFrontier } from './merkle.js';

interface PendingCheckpoint {
  size: number;
  rootHex: string;
  given: boolean;
}

export class CheckpointRoots {
  /** The log's frontier: ChainVerifier appends to it, this only reads its size and root. */
  readonly #frontier: MerkleFrontier;
  /** Sizes announced in advance whose root must be remembered. */
  readonly #expectedSizes = new Set<number>();
  /** size → root (hex) for announced sizes already reached. */
  readonly #rootsAt = new Map<number, string>();
  /** Checkpoints ahead of the log, by size. */
  readonly #pending = new Map<number, PendingCheckpoint[]>();
  /** Sizes of checkpoints that matched the log (to bound where a mismatch can lie). */
  readonly #matchedSizes: number[] = [];
  /** Checkpoints whose root did not match the log, reported relative to matched ones at finish. */
  readonly #mismatches: Array<{ size: number; given: boolean }> = [];

  /** Every size announced or pending, ascending (rebuilt after one is added): see nextAfter. */
  #sorted: number[] | null = [];

  constructor(frontier: MerkleFrontier) {
    this.#frontier = frontier;
  }

  /** Remember the root at these sizes so checkpoints may be added after the events. */
  announce(sizes: Iterable<number>): void {
    for (const size of sizes) {
      if (!Number.isSafeInteger(size) || size < 0) continue; // a malformed checkpoint is reported when added
      if (size < this.#frontier.size) throw new Error(`ChainVerifier: size ${size} announced after the log passed it`);
      if (size === this.#frontier.size) this.#rootsAt.set(size, this.#frontier.rootHex());
      else this.#expectedSizes.add(size);
      this.#sorted = null;
    }
  }

  /**
   * The sizes above the log's where something waits for the root (a checkpoint ahead of the
   * log, an announced size), ascending: where a reader that appends whole subtrees
   * (ChainVerifier.addCheckedSubtrees) must cut them.
   */
  waitingSizes(): number[] {
    const size = this.#frontier.size;
    return this.#sortedSizes().filter((s) => s > size);
  }

  /** The smallest size above `size` where something waits for the root; Infinity when none. */
  nextAfter(size: number): number {
    const sorted = this.#sortedSizes();
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! <= size) lo = mid + 1;
      else hi = mid;
    }
    return lo < sorted.length ? sorted[lo]! : Infinity;
  }

  #sortedSizes(): number[] {
    // Sizes already reached may stay in the list: every question is about sizes above the log's.
    this.#sorted ??= [...new Set([...this.#expectedSizes, ...this.#pending.keys()])].sort((a, b) => a - b);
    return this.#sorted;
  }

  /**
   * Compare a trusted checkpoint with the log at its size: now when the log is there or the size
   * was announced, else when the log reaches it. One below the log's size that was not announced
   * is a programming error (throws): it cannot be answered without the log.
   */
  add({ treeSize, rootHex }: TrustedCheckpoint, given: boolean): void {
    const size = this.#frontier.size;
    if (treeSize > size) {
      const list = this.#pending.get(treeSize);
      const entry = { size: treeSize, rootHex, given };
      if (list) list.push(entry);
      else {
        this.#pending.set(treeSize, [entry]);
        this.#sorted = null;
      }
      return;
    }
    let logRoot: string | undefined;
    if (treeSize === size) logRoot = this.#frontier.rootHex();
    else logRoot = this.#rootsAt.get(treeSize);
    if (logRoot === undefined) {
      throw new Error(
        `ChainVerifier: checkpoint at size ${treeSize} added after the log passed it without expectCheckpointSizes(); ` +
          'add checkpoints before the events they cover',
      );
    }
    this.#record(treeSize, logRoot === rootHex, given);
  }

  /**
   * The log has just grown to `size` events. Called once per event (the verifier's hot path):
   * two lookups, and the root is computed only at a size something waits for.
   */
  reached(size: number): void {
    const pending = this.#pending.get(size);
    const announced = this.#expectedSizes.has(size);
    if (pending === undefined && !announced) return;
    const root = this.#frontier.rootHex();
    if (announced) {
      this.#expectedSizes.delete(size);
      this.#rootsAt.set(size, root);
    }
    if (pending !== undefined) {
      this.#pending.delete(size);
      for (const cp of pending) this.#record(size, cp.rootHex === root, cp.given);
    }
  }

  /**
   * At the end of the log: checkpoints still waiting mean the log is shorter than a signed
   * checkpoint; the smallest mismatch is reported with the range the change lies in.
   */
  reportAtEnd(failures: FirstFailure): void {
    const size = this.#frontier.size;
    const waiting = [...this.#pending.values()].flat();
    if (waiting.length > 0) {
      const longest = waiting.reduce((a, b) => (b.size > a.size ? b : a));
      failures.report(
        size + 1,
        `the log has ${size} events but a signed ${longest.given ? 'given' : 'stored'} checkpoint covers ${longest.size}: ` +
          'the log was cut off or rolled back',
      );
    }
    if (this.#mismatches.length > 0) {
      const first = this.#mismatches.reduce((a, b) => (b.size < a.size ? b : a));
      const below = this.#matchedSizes.filter((s) => s < first.size);
      const good = below.length > 0 ? Math.max(...below) : 0;
      const range =
        good > 0
          ? `; the log matches the signed checkpoint at size ${good}, so the change lies in seq ${good + 1}..${first.size}`
          : `; the change lies in seq 1..${first.size}`;
      failures.report(
        first.size,
        `the log's Merkle root at size ${first.size} differs from a signed ${first.given ? 'given' : 'stored'} checkpoint ` +
          `(events altered and re-chained, or the log rolled back and rewritten)${range}`,
      );
    }
  }

  #record(size: number, matches: boolean, given: boolean): void {
    if (matches) this.#matchedSizes.push(size);
    else this.#mismatches.push({ size, given });
  }
}
