/**
 * The streaming verifier behind the offline `gatehouse verify` (docs/formats.md#events, docs/cli.md#gatehouse-verify), one instance
 * per account. It holds O(log n) state for the events (the last hash, the expected seq and a
 * Merkle frontier) plus a few numbers per checkpoint; it never holds the log.
 *
 * Feeding order. Events must be added in the order the log stores them (seq order). A
 * checkpoint can only be compared with the log at its own size, so the verifier must see or
 * know of it no later than the event that completes that size:
 *
 *   - add a checkpoint whose size is >= the number of events added so far at any time: it is
 *     held (its signature is checked at once) and compared when the log reaches its size;
 *     one still waiting at finish() means the log is shorter than a signed checkpoint;
 *   - or announce sizes first with expectCheckpointSizes(); the root at each announced size is
 *     remembered (32 bytes each) and the checkpoint can be added after the events.
 *
 * So a SQLite/PostgreSQL reader queries the checkpoints (few: one per ~1000 events) and adds
 * them before streaming the events; an export reader (events, then checkpoints) pre-scans the
 * file for its checkpoint lines and adds or announces them before the events. Given
 * checkpoints (--checkpoint) are added before the events too. Adding a checkpoint below the
 * current size that was not announced is a programming error (throws): the verifier cannot
 * answer it without the log.
 *
 * Failures. Every check keeps running after a failure (so counts stay meaningful), and the
 * verdict names the failure with the smallest seq. Every failure has a seq, so the report line
 * always reads `TAMPERED at seq N` (docs/cli.md#gatehouse-verify): a checkpoint that is not trusted (forged
 * signature, foreign origin, fields that disagree with its note) is reported at its tree size,
 * an unwrappable data key at the first event with a payload (1 when none). Those two kinds
 * say nothing about a particular event, so they rank after any failure of the log itself.
 *
 * This class keeps the chain's position (expected seq, last hash, frontier) and the fast paths
 * over it; the rest is beside it: the reference checks of an event's content (event-checks.ts),
 * whether a checkpoint is trusted (checkpoint-trust.ts), checkpoints against the log's root at
 * their sizes (checkpoint-roots.ts), which failure the verdict names (first-failure.ts) and the
 * account's data key (account-data-key.ts).
 */
import { type MasterKey, NO_DATA_KEY, type Opens, payloadCheck, unwrapAccountDataKey } from './account-data-key.js';
import { CheckpointRoots } from './checkpoint-roots.js';
import { TsOrder, type TsRunSummary } from './ts-order.js';
import { CheckpointTrust, type VerifierCheckpoint } from './checkpoint-trust.js';
import { EventChecks, chainedHash } from './event-checks.js';
import { checkEventRow } from './event-hash.js';
import { GENESIS_PREV_HASH, headerProblem, isPositiveInt } from './event-shape.js';
import { FirstFailure } from './first-failure.js';
import { MerkleFrontier } from './merkle.js';
import type { NoteVerifierKey } from './signing-key.js';
import { type VerifierEvent, rowEvent } from './verifier-event.js';

export interface ChainVerifierOptions {
  accountId: string;
  /** Keys whose checkpoint signatures are trusted (the log's key; witnesses are ignored). */
  trustedKeys: ReadonlyArray<NoteVerifierKey>;
  /** When given, a checkpoint's origin must be exactly `gatehouse/<ledgerId>/<accountId>`. */
  ledgerId?: string;
  /** With the master key and the account's wrapped data key, every payload must decrypt. */
  masterKey?: MasterKey;
  /**
   * The account's wrapped data key; `null` means it was destroyed (the account is shredded:
   * payloads are unreadable, which is not tampering); undefined means the ledger holds none
   * (no key row, no `data_keys` member): with the master key, an event that carries a payload
   * is then tampering (account-data-key.ts NO_DATA_KEY), one without is not.
   */
  wrappedDataKey?: Uint8Array | null;
}

export interface AccountVerdict {
  account_id: string;
  events: number;
  checkpoints: number;
  first_bad_seq: number | null;
  reason: string | null;
  shredded: boolean;
  /**
   * Findings that are not tampering (event times going backwards); empty when there are none.
   * VerificationRun (src/verify/run.ts) keeps them only for a verdict that is otherwise intact.
   */
  warnings: string[];
}

export class ChainVerifier {
  readonly accountId: string;
  /**
   * Null when payloads are not opened: no master key, a shredded key, or it did not unwrap;
   * REFUSES_EVERY_PAYLOAD when the account has no data key at all (NO_DATA_KEY).
   */
  readonly #opens: Opens | null;
  readonly #shredded: boolean;

  #events = 0;
  #expectedSeq = 1;
  #prevHash = GENESIS_PREV_HASH;
  readonly #frontier = new MerkleFrontier();
  readonly #roots = new CheckpointRoots(this.#frontier);
  #checkpoints = 0;
  readonly #tsOrder = new TsOrder();

  readonly #failures = new FirstFailure();
  readonly #eventChecks: EventChecks;
  readonly #checkpointTrust: CheckpointTrust;
  #finished = false;
  /** The wrapped data key did not unwrap; reported at the first event with a payload. */
  readonly #keyFailed: boolean;
  #firstPayloadSeq: number | null = null;

  constructor(options: ChainVerifierOptions) {
    this.accountId = options.accountId;
    this.#shredded = options.wrappedDataKey === null;
    const key = unwrapAccountDataKey(options.masterKey, options.accountId, options.wrappedDataKey);
    this.#keyFailed = key === 'does_not_unwrap';
    const noDataKey = key === NO_DATA_KEY;
    this.#opens = key === 'does_not_unwrap' ? null : payloadCheck(key, this.accountId);
    this.#eventChecks = new EventChecks(this.accountId, noDataKey ? null : this.#opens, this.#failures, noDataKey);
    this.#checkpointTrust = new CheckpointTrust(this.accountId, options.trustedKeys, options.ledgerId, this.#failures);
  }

  /** Remember the root at these sizes so checkpoints may be added after the events. */
  expectCheckpointSizes(sizes: Iterable<number>): void {
    this.#roots.announce(sizes);
  }

  /**
   * Check one event given as a database row (EVENT_ROW_COLUMNS order, event-shape.ts: the
   * 16 header fields in contract order, then hash and payload), in stored order. The fast path
   * for readers of 1M-row ledgers: it builds no header object. A row is taken here only when
   * every check passes (right types, seq and link as expected, header hashes to the stored hash,
   * payload matches and, with the master key, decrypts); anything else goes through addEvent,
   * which makes the same checks and names the failure. So this never accepts what addEvent
   * would refuse.
   */
  addRow(r: readonly unknown[]): void {
    if (!this.#finished && !this.#keyFailed) {
      const hash = checkEventRow(r, this.#expectedSeq, this.#prevHash, this.accountId, this.#opens);
      if (hash !== null) {
        this.#tsOrder.note(r[0], r[2]);
        this.#events++;
        this.#expectedSeq = (r[0] as number) + 1;
        this.#prevHash = hash;
        this.#frontier.appendEventHash(hash);
        this.#roots.reached(this.#frontier.size);
        return;
      }
    }
    this.addEvent(rowEvent(r));
  }

  /**
   * Whether rows checked elsewhere with checkEventRow (a worker thread verifying a slice of the
   * log) may be taken through addCheckedSubtrees: not when the data key failed to unwrap (every
   * row then takes the reference path, which names the failure).
   */
  get acceptsCheckedSubtrees(): boolean {
    return !this.#finished && !this.#keyFailed;
  }

  /**
   * The sizes ahead of the log where a checkpoint waits for the root, ascending: a worker's
   * subtrees must end at each of them (addCheckedSubtrees refuses one that spans it).
   */
  waitingSizes(): number[] {
    return this.#roots.waitingSizes();
  }

  /**
   * Take `count` consecutive events that checkEventRow accepted elsewhere (each against its
   * predecessor in the same run), given as the perfect subtrees that cover their leaves
   * (SubtreeRange: `levels[i]` and the 32-byte root at `hashes[32 i]`, in leaf order):
   * `firstSeq` and `firstPrevHash` are the first event's seq and prev_hash, `lastHash` the last
   * event's hash. Taken only when the run continues this chain exactly (its first seq is the
   * next expected one and the log's size, its prev_hash is the hash of the last event taken),
   * every subtree is aligned where it lands, they cover exactly `count` leaves, and none spans
   * a size where a checkpoint waits (each of those is the end of one, so the root there is
   * computed and compared as for single-thread rows); returns false, and changes nothing,
   * otherwise — the caller then feeds those rows through addRow, which names the failure.
   */
  addCheckedSubtrees(
    firstSeq: number, firstPrevHash: string, lastHash: string, count: number, levels: Uint8Array, hashes: Buffer, subtrees: number,
    ts?: TsRunSummary,
  ): boolean {
    const frontier = this.#frontier;
    const start = frontier.size;
    if (
      !this.acceptsCheckedSubtrees || count <= 0 || firstSeq !== this.#expectedSeq || firstSeq !== start + 1 ||
      firstPrevHash !== this.#prevHash || subtrees > levels.length || subtrees * 32 > hashes.length
    ) return false;
    // Check every subtree before changing anything.
    const roots = this.#roots;
    let size = start;
    let waiting = roots.nextAfter(size);
    for (let i = 0; i < subtrees; i++) {
      const width = 2 ** levels[i]!;
      if (size % width !== 0) return false;
      size += width;
      if (waiting < size) return false;
      if (waiting === size) waiting = roots.nextAfter(size);
    }
    if (size !== start + count) return false;
    if (ts) this.#tsOrder.noteRun(firstSeq, ts.firstTs, ts.lastTs, ts.inside);
    for (let i = 0; i < subtrees; i++) {
      frontier.appendSubtreeAt(levels[i]!, hashes, i * 32);
      roots.reached(frontier.size);
    }
    this.#events += count;
    this.#expectedSeq = firstSeq + count;
    this.#prevHash = lastHash;
    return true;
  }

  /** Check one event; events must come in stored order. The reference path: names every failure. */
  addEvent(event: VerifierEvent): void {
    this.#checkOpen();
    this.#events++;
    const { header, hash, payload } = event;
    const expected = this.#expectedSeq;
    this.#tsOrder.note((header as { seq?: unknown } | null)?.seq, (header as { ts?: unknown } | null)?.ts);
    if (this.#keyFailed && this.#firstPayloadSeq === null && payload !== null && payload !== undefined) {
      const s = (header as { seq?: unknown } | null)?.seq;
      this.#firstPayloadSeq = isPositiveInt(s) ? s : expected;
    }

    const malformed = headerProblem(header);
    const seq: number = malformed === null || isPositiveInt((header as { seq?: unknown })?.seq) ? header.seq : expected;

    // 1. seq continuity
    if (seq !== expected) {
      if (seq > expected) this.#failures.report(expected, `event seq ${expected} is missing (the next event stored has seq ${seq})`);
      else this.#failures.report(expected, `expected seq ${expected}, found seq ${seq} again or out of order`);
    }
    // After a gap, resynchronise on the stored seq; an old seq again (duplicate, swap) does not move it.
    const behind = seq < expected;
    if (!behind) this.#expectedSeq = seq + 1;

    // Advance with what the log claims, whatever the checks found (see chainedHash).
    let h: string;
    if (behind) {
      // Already reported at `expected`; its own checks would name an earlier seq that is not at fault.
      h = chainedHash(hash, null);
    } else if (malformed !== null) {
      this.#failures.report(seq, `event ${seq}: malformed header: ${malformed}`);
      h = chainedHash(hash, null);
    } else {
      h = this.#eventChecks.check(header, hash, payload, this.#prevHash);
    }
    this.#prevHash = h;
    this.#frontier.appendEventHash(h);
    this.#roots.reached(this.#frontier.size);
  }

  /**
   * Check a checkpoint: its note verifies under a trusted key, its origin names this account,
   * its JSON fields match the note, and its root equals the log's root at its size.
   * `given` marks checkpoints the user supplied (--checkpoint) rather than stored ones.
   */
  addCheckpoint(checkpoint: VerifierCheckpoint, opts: { given: boolean }): void {
    this.#checkOpen();
    const trusted = this.#checkpointTrust.check(checkpoint, opts.given);
    if (trusted === null) return;
    this.#checkpoints++;
    this.#roots.add(trusted, opts.given);
  }

  /** The verdict. Checkpoints still waiting mean the log is shorter than a signed checkpoint. */
  finish(): AccountVerdict {
    if (!this.#finished) {
      this.#finished = true;
      if (this.#keyFailed) {
        this.#failures.report(
          this.#firstPayloadSeq ?? 1,
          'the data key does not unwrap under the master key (wrong master key, or the key row was altered)',
          true,
        );
      }
      this.#roots.reportAtEnd(this.#failures);
    }
    return {
      account_id: this.accountId,
      events: this.#events,
      checkpoints: this.#checkpoints,
      first_bad_seq: this.#failures.seq,
      reason: this.#failures.reason,
      shredded: this.#shredded,
      warnings: [this.#tsOrder.warning()].filter((w): w is string => w !== null),
    };
  }

  #checkOpen(): void {
    if (this.#finished) throw new Error('ChainVerifier: already finished');
  }
}
