/**
 * The streaming verifier behind the offline `gatehouse verify` (CONTRACT §7, §8), one instance
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
 * always reads `TAMPERED at seq N` (CONTRACT §8): a checkpoint that is not trusted (forged
 * signature, foreign origin, fields that disagree with its note) is reported at its tree size,
 * an unwrappable data key at the first event with a payload (1 when none). Those two kinds
 * say nothing about a particular event, so they rank after any failure of the log itself.
 */
import { type EventHeader, GENESIS_PREV_HASH, checkEventRow, eventHash } from './event-hash.js';
import { HEX64, headerProblem, isPositiveInt } from './event-shape.js';
import { MerkleFrontier, sha256Digest } from './merkle.js';
import { NoteError, parseCheckpointBody, verifyNote } from './note.js';
import { SealError, openPayload, unwrapDataKey } from './seal.js';
import type { NoteVerifierKey } from './signing-key.js';
import { loadSodium } from './sodium.js';

const sodium = await loadSodium();

export interface ChainVerifierOptions {
  accountId: string;
  /** Keys whose checkpoint signatures are trusted (the log's key; witnesses are ignored). */
  trustedKeys: ReadonlyArray<NoteVerifierKey>;
  /** When given, a checkpoint's origin must be exactly `gatehouse/<ledgerId>/<accountId>`. */
  ledgerId?: string;
  /** With the master key and the account's wrapped data key, every payload must decrypt. */
  masterKey?: Uint8Array;
  /**
   * The account's wrapped data key; `null` means it was destroyed (the account is shredded:
   * payloads are unreadable, which is not tampering); undefined means not known to the reader.
   */
  wrappedDataKey?: Uint8Array | null;
}

export interface VerifierEvent {
  header: EventHeader;
  /** The stored hash, lowercase hex. */
  hash: string;
  /** The stored (sealed) payload bytes, nonce included. */
  payload: Uint8Array | null;
}

export interface VerifierCheckpoint {
  /** Optional for a checkpoint given as bare note text; when present it must match the note. */
  tree_size?: number;
  /** Hex; optional like tree_size. */
  root_hash?: string;
  note: string;
}

export interface AccountVerdict {
  account_id: string;
  events: number;
  checkpoints: number;
  first_bad_seq: number | null;
  reason: string | null;
  shredded: boolean;
}

interface Failure {
  seq: number;
  reason: string;
  /** A checkpoint or key failure: ranks after any failure found in the events themselves. */
  secondary: boolean;
}

interface PendingCheckpoint {
  size: number;
  rootHex: string;
  given: boolean;
}


export class ChainVerifier {
  readonly accountId: string;
  readonly #trustedKeys: ReadonlyArray<NoteVerifierKey>;
  readonly #ledgerId: string | undefined;
  #dataKey: Uint8Array | null = null;
  readonly #shredded: boolean;

  #events = 0;
  #expectedSeq = 1;
  #prevHash = GENESIS_PREV_HASH;
  readonly #frontier = new MerkleFrontier();

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
  #checkpoints = 0;

  #failure: Failure | null = null;
  #finished = false;
  /** The wrapped data key did not unwrap; reported at the first event with a payload. */
  #keyFailed = false;
  #firstPayloadSeq: number | null = null;

  constructor(options: ChainVerifierOptions) {
    this.accountId = options.accountId;
    this.#trustedKeys = options.trustedKeys;
    this.#ledgerId = options.ledgerId;
    this.#shredded = options.wrappedDataKey === null;
    if (options.masterKey !== undefined && options.wrappedDataKey) {
      try {
        this.#dataKey = unwrapDataKey(sodium, options.masterKey, options.accountId, options.wrappedDataKey);
      } catch (err) {
        if (!(err instanceof SealError)) throw err;
        this.#keyFailed = true;
      }
    }
  }

  /** Remember the root at these sizes so checkpoints may be added after the events. */
  expectCheckpointSizes(sizes: Iterable<number>): void {
    for (const size of sizes) {
      if (!Number.isSafeInteger(size) || size < 0) continue; // a malformed checkpoint is reported when added
      if (size < this.#frontier.size) throw new Error(`ChainVerifier: size ${size} announced after the log passed it`);
      if (size === this.#frontier.size) this.#rootsAt.set(size, this.#frontier.rootHex());
      else this.#expectedSizes.add(size);
    }
  }

  /**
   * Check one event given as a database row (EVENT_ROW order: the 16 header fields in contract
   * order, then hash and payload), in stored order. The fast path for readers of 1M-row
   * ledgers: it builds no header object. A row is taken here only when every check passes
   * (right types, seq and link as expected, header hashes to the stored hash, payload matches
   * and, with the master key, decrypts); anything else goes through addEvent, which makes the
   * same checks and names the failure. So this never accepts what addEvent would refuse.
   */
  addRow(r: readonly unknown[]): void {
    if (!this.#finished && !this.#keyFailed) {
      const hash = checkEventRow(r, this.#expectedSeq, this.#prevHash, this.accountId, this.#dataKey === null ? null : this.#opens);
      if (hash !== null) {
        this.#events++;
        this.#expectedSeq = (r[0] as number) + 1;
        this.#prevHash = hash;
        this.#frontier.appendEventHash(hash);
        this.#reached(this.#frontier.size);
        return;
      }
    }
    this.addEvent(rowEvent(r));
  }

  /** With the data key: whether a payload opens under it, bound to account and seq. */
  readonly #opens = (seq: number, payload: Uint8Array): boolean => payloadOpens(this.#dataKey!, this.accountId, seq, payload);

  /**
   * Whether rows checked elsewhere with checkEventRow (a worker thread verifying a slice of the
   * log) may be taken through addCheckedLeaves: not when the data key failed to unwrap (every
   * row then takes the reference path, which names the failure).
   */
  get acceptsCheckedLeaves(): boolean {
    return !this.#finished && !this.#keyFailed;
  }

  /**
   * Take `count` consecutive events that checkEventRow accepted elsewhere (each against its
   * predecessor in the same run), given as their RFC 6962 leaf hashes (32 bytes each, from
   * writeEventLeaf) in `leaves` at `offset`: `firstSeq` and `firstPrevHash` are the first
   * event's seq and prev_hash, `lastHash` the last event's hash. Taken only when the run
   * continues this chain exactly (its first seq is the next expected one and its prev_hash is
   * the hash of the last event taken); returns false, and changes nothing, otherwise — the
   * caller then feeds those rows through addRow, which names the failure.
   */
  addCheckedLeaves(firstSeq: number, firstPrevHash: string, lastHash: string, leaves: Buffer, offset: number, count: number): boolean {
    if (!this.acceptsCheckedLeaves || count <= 0 || firstSeq !== this.#expectedSeq || firstPrevHash !== this.#prevHash) return false;
    const frontier = this.#frontier;
    const end = offset + count * 32;
    for (let o = offset; o < end; o += 32) {
      frontier.appendLeafAt(leaves, o);
      this.#reached(frontier.size);
    }
    this.#events += count;
    this.#expectedSeq = firstSeq + count;
    this.#prevHash = lastHash;
    return true;
  }

  /** Check one event; events must come in stored order. */
  addEvent(event: VerifierEvent): void {
    this.#checkOpen();
    this.#events++;
    const { header, hash, payload } = event;
    const expected = this.#expectedSeq;
    if (this.#keyFailed && this.#firstPayloadSeq === null && payload !== null && payload !== undefined) {
      const s = (header as { seq?: unknown } | null)?.seq;
      this.#firstPayloadSeq = isPositiveInt(s) ? s : expected;
    }

    const malformed = headerProblem(header);
    const seq: number = malformed === null || isPositiveInt((header as { seq?: unknown })?.seq) ? header.seq : expected;

    // 1. seq continuity
    if (seq !== expected) {
      if (seq > expected) this.#fail(expected, `event seq ${expected} is missing (the next event stored has seq ${seq})`);
      else this.#fail(expected, `expected seq ${expected}, found seq ${seq} again or out of order`);
    }
    // After a gap, resynchronise on the stored seq; an old seq again (duplicate, swap) does not move it.
    const behind = seq < expected;
    if (!behind) this.#expectedSeq = seq + 1;

    let recomputed: string | null = null;
    let storedHashOk: boolean | undefined; // decided lazily: equal to the recomputed hash means well-formed

    if (behind) {
      // Already reported at `expected`; its own checks would name an earlier seq that is not at fault.
    } else if (malformed !== null) {
      this.#fail(seq, `event ${seq}: malformed header: ${malformed}`);
    } else {
      // 2. account
      if (header.account_id !== this.accountId) {
        this.#fail(seq, `event ${seq}: account_id is ${JSON.stringify(header.account_id)}, not ${JSON.stringify(this.accountId)}`);
      }
      // 3. link
      if (header.prev_hash !== this.#prevHash) {
        this.#fail(seq, `event ${seq}: prev_hash does not link to the hash of event ${seq - 1 === 0 ? '0 (genesis)' : seq - 1}`);
      }
      // 4. hash
      try {
        recomputed = eventHash(header);
      } catch (err) {
        // canonicalize refuses what JCS cannot represent (a lone surrogate)
        this.#fail(seq, `event ${seq}: malformed header: ${(err as Error).message}`);
      }
      storedHashOk = (recomputed !== null && recomputed === hash) || (typeof hash === 'string' && HEX64.test(hash));
      if (!storedHashOk) {
        this.#fail(seq, `event ${seq}: stored hash is not 64 lowercase hex digits`);
      } else if (recomputed !== null && recomputed !== hash) {
        this.#fail(seq, `event ${seq}: header does not hash to the stored hash (header altered)`);
      }
      // 5. payload hash
      if (payload === null || payload === undefined) {
        if (header.payload_hash !== null) this.#fail(seq, `event ${seq}: payload is missing but the header has a payload_hash`);
      } else if (header.payload_hash === null) {
        this.#fail(seq, `event ${seq}: a payload is stored but the header has no payload_hash`);
      } else if (sha256Digest('sha256', payload, 'hex') !== header.payload_hash) {
        this.#fail(seq, `event ${seq}: payload does not match payload_hash (payload altered)`);
      } else if (this.#dataKey !== null) {
        // 6. the payload opens under the account's data key, bound to account and seq
        try {
          openPayload(sodium, this.#dataKey, this.accountId, seq, payload);
        } catch (err) {
          if (!(err instanceof SealError)) throw err;
          this.#fail(seq, `event ${seq}: payload matches its hash but does not decrypt under the account's data key`);
        }
      }
    }

    // Advance with what the log claims (checkpoints were signed over the stored hashes); an
    // unusable stored hash is replaced by the recomputed one, or by a stand-in so the tree
    // keeps its shape (that event is already reported).
    storedHashOk ??= typeof hash === 'string' && HEX64.test(hash);
    const h = storedHashOk ? hash : (recomputed ?? sha256Digest('sha256', String(hash), 'hex'));
    this.#prevHash = h;
    this.#frontier.appendEventHash(h);
    this.#reached(this.#frontier.size);
  }

  /**
   * Check a checkpoint: its note verifies under a trusted key, its origin names this account,
   * its JSON fields match the note, and its root equals the log's root at its size.
   * `given` marks checkpoints the user supplied (--checkpoint) rather than stored ones.
   */
  addCheckpoint(checkpoint: VerifierCheckpoint, opts: { given: boolean }): void {
    this.#checkOpen();
    const what = opts.given ? 'given checkpoint' : 'stored checkpoint';
    const label = typeof checkpoint?.tree_size === 'number' ? `${what} at size ${checkpoint.tree_size}` : what;
    const claimed = claimedSize(checkpoint);
    let verifiedBy: string[];
    let body: string;
    try {
      ({ body, verifiedBy } = verifyNote(checkpoint.note, this.#trustedKeys));
    } catch (err) {
      if (!(err instanceof NoteError)) throw err;
      const why =
        err.code === 'unverified_note'
          ? 'is not signed by a trusted key'
          : err.code === 'invalid_signature'
            ? `has a bad signature (${err.message})`
            : `is not a signed note (${err.message})`;
      this.#fail(claimed, `${label} ${why}`, true);
      return;
    }
    let parsed;
    try {
      parsed = parseCheckpointBody(body);
    } catch (err) {
      if (!(err instanceof NoteError)) throw err;
      this.#fail(claimed, `${label}: ${err.message}`, true);
      return;
    }
    const { origin, treeSize, rootHash } = parsed;
    const expectedOrigins =
      this.#ledgerId !== undefined
        ? [`gatehouse/${this.#ledgerId}/${this.accountId}`]
        : verifiedBy.filter((n) => n.startsWith('gatehouse/')).map((n) => `${n}/${this.accountId}`);
    if (!expectedOrigins.includes(origin)) {
      this.#fail(Math.max(treeSize, 1), `${what} at size ${treeSize} has origin ${JSON.stringify(origin)}, not ${expectedOrigins.map((o) => JSON.stringify(o)).join(' or ') || 'gatehouse/<ledger id>/' + this.accountId}`, true);
      return;
    }
    const rootHex = Buffer.from(rootHash).toString('hex');
    if (checkpoint.tree_size !== undefined && checkpoint.tree_size !== treeSize) {
      this.#fail(Math.max(treeSize, 1), `${what}: tree_size ${checkpoint.tree_size} differs from its signed note (${treeSize})`, true);
      return;
    }
    if (checkpoint.root_hash !== undefined && checkpoint.root_hash !== rootHex) {
      this.#fail(Math.max(treeSize, 1), `${what} at size ${treeSize}: root_hash differs from its signed note`, true);
      return;
    }
    this.#checkpoints++;

    const size = this.#frontier.size;
    if (treeSize > size) {
      const list = this.#pending.get(treeSize);
      const entry = { size: treeSize, rootHex, given: opts.given };
      if (list) list.push(entry);
      else this.#pending.set(treeSize, [entry]);
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
    this.#compare(treeSize, logRoot === rootHex, opts.given);
  }

  /** The verdict. Checkpoints still waiting mean the log is shorter than a signed checkpoint. */
  finish(): AccountVerdict {
    if (!this.#finished) {
      this.#finished = true;
      const size = this.#frontier.size;
      if (this.#keyFailed) {
        this.#fail(
          this.#firstPayloadSeq ?? 1,
          'the data key does not unwrap under the master key (wrong master key, or the key row was altered)',
          true,
        );
      }
      const waiting = [...this.#pending.values()].flat();
      if (waiting.length > 0) {
        const longest = waiting.reduce((a, b) => (b.size > a.size ? b : a));
        this.#fail(
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
        this.#fail(
          first.size,
          `the log's Merkle root at size ${first.size} differs from a signed ${first.given ? 'given' : 'stored'} checkpoint ` +
            `(events altered and re-chained, or the log rolled back and rewritten)${range}`,
        );
      }
    }
    const f = this.#failure;
    return {
      account_id: this.accountId,
      events: this.#events,
      checkpoints: this.#checkpoints,
      first_bad_seq: f?.seq ?? null,
      reason: f?.reason ?? null,
      shredded: this.#shredded,
    };
  }

  #reached(size: number): void {
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
      for (const cp of pending) this.#compare(size, cp.rootHex === root, cp.given);
    }
  }

  #compare(size: number, matches: boolean, given: boolean): void {
    if (matches) this.#matchedSizes.push(size);
    else this.#mismatches.push({ size, given });
  }

  #fail(seq: number, reason: string, secondary = false): void {
    const f = this.#failure;
    if (f === null || (f.secondary && !secondary) || (f.secondary === secondary && seq < f.seq)) this.#failure = { seq, reason, secondary };
  }

  #checkOpen(): void {
    if (this.#finished) throw new Error('ChainVerifier: already finished');
  }
}

/** Whether a sealed payload opens under the data key, bound to account and seq. */
export function payloadOpens(dataKey: Uint8Array, accountId: string, seq: number, payload: Uint8Array): boolean {
  try {
    openPayload(sodium, dataKey, accountId, seq, payload);
    return true;
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    return false;
  }
}

/**
 * The data key for checkEventRow outside a ChainVerifier (a worker thread): unwrapped under the
 * master key, or null when there is no master key, no key (shredded or unknown) or it does not
 * unwrap — in that last case the caller must not take the fast path at all (the verifier
 * reports the key); ChainVerifier.acceptsCheckedLeaves tells it.
 */
export function unwrapForFastPath(masterKey: Uint8Array | undefined, accountId: string, wrapped: Uint8Array | null | undefined): Uint8Array | null {
  if (masterKey === undefined || !wrapped) return null;
  try {
    return unwrapDataKey(sodium, masterKey, accountId, wrapped);
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    return null;
  }
}

/** A row in EVENT_ROW order as the verifier's event (the slow path; no check here). */
export function rowEvent(r: readonly unknown[]): VerifierEvent {
  const header = {
    seq: r[0], account_id: r[1], ts: r[2], type: r[3], operation_id: r[4], idempotency_key: r[5],
    fingerprint: r[6], actor: r[7], agent_run_id: r[8], method: r[9], route: r[10], state: r[11],
    provider_ref: r[12], response_status: r[13], payload_hash: r[14], prev_hash: r[15],
  } as EventHeader;
  return { header, hash: r[16] as string, payload: (r[17] as Uint8Array | null | undefined) ?? null };
}

/**
 * The size a checkpoint claims, for naming it in a failure: its JSON tree_size, else the size
 * line of its (unverified) note; at least 1, since the report names a seq.
 */
function claimedSize(checkpoint: VerifierCheckpoint | null | undefined): number {
  const fromJson = checkpoint?.tree_size;
  if (typeof fromJson === 'number' && Number.isSafeInteger(fromJson)) return Math.max(fromJson, 1);
  const note = checkpoint?.note;
  const line = typeof note === 'string' ? /^[^\n]*\n(\d{1,15})\n/.exec(note)?.[1] : undefined;
  return line === undefined ? 1 : Math.max(Number(line), 1);
}
