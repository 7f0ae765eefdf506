/**
 * One `gatehouse verify` run over a whole ledger: a ChainVerifier per account, fed by a
 * reader (SQLite file, PostgreSQL, export) one account at a time, in seq order. The readers
 * know how to fetch rows; this knows what to check them against (the trusted keys, the
 * checkpoints the user saved, the master key).
 */
import type { MasterKey } from '../core/account-data-key.js';
import { type AccountVerdict, ChainVerifier } from '../core/chain-verifier.js';
import { type VerifierCheckpoint, claimedSize } from '../core/checkpoint-trust.js';
import type { NoteVerifierKey } from '../core/signing-key.js';
import type { VerifierEvent } from '../core/verifier-event.js';
import type { SavedCheckpointFile } from './saved-checkpoint-file.js';
import { largestSignedSize, unsignedTailWarning } from './unsigned-tail.js';
import { type WitnessPolicy, witnessShortfall } from './witness-policy.js';

export interface AccountStart {
  accountId: string;
  /**
   * The wrapped data key; null when shredded; undefined when the ledger holds none for the
   * account (no key row, no data_keys member): with --master-key its payloads are then
   * tampering (ChainVerifierOptions.wrappedDataKey).
   */
  wrappedDataKey?: Uint8Array | null;
  /** Checkpoints stored with the log; they must reach the verifier before the events. */
  checkpoints: VerifierCheckpoint[];
}

export interface RunOptions {
  trustedKeys: NoteVerifierKey[];
  ledgerId: string | null;
  masterKey?: MasterKey;
  given: SavedCheckpointFile[];
  /** Called now and then with the number of events checked so far (never per event). */
  onProgress?: (events: number) => void;
  /** `--witness-key … --min-witnesses N`: cosignatures the newest checkpoint must carry. */
  witnesses?: WitnessPolicy;
}

const PROGRESS_EVERY = 1 << 14;

interface Open {
  verifier: ChainVerifier;
  lastSeq: number;
  /** Failures a reader found below the verifier (a record that does not parse at all). */
  broken: { seq: number; reason: string } | null;
  /** The stored checkpoint with the largest size (for the witness policy). */
  newest: VerifierCheckpoint | null;
  /** The largest size a stored or given checkpoint signs (for the unsigned-tail warning). */
  signedSize: number;
  /** The input holds the account's data key (wrapped, or destroyed by a shred). */
  hasDataKey: boolean;
}

const NO_EVENTS_BUT_A_DATA_KEY = 'the input holds its data key but none of its events; the service makes the key with the account\'s first event, so the input may have been cut short';

export class VerificationRun {
  readonly #options: RunOptions;
  #open: Open | null = null;
  readonly #verdicts = new Map<string, AccountVerdict>();
  #events = 0;

  constructor(options: RunOptions) {
    this.#options = options;
  }

  /** Accounts named by a given checkpoint: they must be verified even when the log lost them. */
  givenAccounts(): string[] {
    return [...new Set(this.#options.given.map((g) => g.accountId))];
  }

  beginAccount(start: AccountStart): void {
    this.endAccount();
    const { trustedKeys, ledgerId, masterKey } = this.#options;
    const verifier = new ChainVerifier({
      accountId: start.accountId,
      trustedKeys,
      ...(ledgerId !== null ? { ledgerId } : {}),
      ...(masterKey !== undefined ? { masterKey } : {}),
      ...(start.wrappedDataKey !== undefined ? { wrappedDataKey: start.wrappedDataKey } : {}),
    });
    for (const checkpoint of start.checkpoints) verifier.addCheckpoint(checkpoint, { given: false });
    for (const g of this.#options.given) {
      if (g.accountId === start.accountId) verifier.addCheckpoint(g.checkpoint, { given: true });
    }
    const newest = start.checkpoints.reduce<VerifierCheckpoint | null>(
      (a, c) => (a === null || Number(c.tree_size) > Number(a.tree_size) ? c : a), null);
    const given = this.#options.given.filter((g) => g.accountId === start.accountId).map((g) => g.checkpoint);
    const signedSize = largestSignedSize([...start.checkpoints, ...given]);
    this.#open = { verifier, lastSeq: 0, broken: null, newest, signedSize, hasDataKey: start.wrappedDataKey !== undefined };
  }

  get currentAccount(): string | null {
    return this.#open?.verifier.accountId ?? null;
  }

  hasVerdict(accountId: string): boolean {
    return this.#verdicts.has(accountId);
  }

  addEvent(event: VerifierEvent): void {
    const open = this.#open!;
    open.verifier.addEvent(event);
    const seq = event.header?.seq;
    if (typeof seq === 'number') open.lastSeq = seq;
    if (++this.#events % PROGRESS_EVERY === 0) this.#options.onProgress?.(this.#events);
  }

  /** One event as a database row in EVENT_ROW_COLUMNS order (ChainVerifier.addRow). */
  addRow(row: readonly unknown[]): void {
    const open = this.#open!;
    open.verifier.addRow(row);
    const seq = row[0];
    if (typeof seq === 'number') open.lastSeq = seq;
    if (++this.#events % PROGRESS_EVERY === 0) this.#options.onProgress?.(this.#events);
  }

  /** The master key given to this run (--master-key), for readers that check rows in worker threads. */
  get masterKey(): MasterKey | undefined {
    return this.#options.masterKey;
  }

  /** Whether the open account's verifier takes rows checked elsewhere (ChainVerifier.acceptsCheckedSubtrees). */
  get acceptsCheckedSubtrees(): boolean {
    return this.#open?.verifier.acceptsCheckedSubtrees ?? false;
  }

  /**
   * The sizes the account's checkpoints claim, stored and given, ascending, before beginAccount
   * checks a signature: every size where a trusted one will wait (ChainVerifier.waitingSizes)
   * is among them, and a claim that fails its check is only one more place where nothing waits.
   */
  claimedSizes(start: AccountStart): number[] {
    const given = this.#options.given.filter((g) => g.accountId === start.accountId).map((g) => g.checkpoint);
    return [...new Set([...start.checkpoints, ...given].map(claimedSize))].sort((a, b) => a - b);
  }

  /**
   * A run of consecutive rows that checkEventRow accepted in a worker thread, as the perfect
   * subtrees over their leaves (ChainVerifier.addCheckedSubtrees). False when it does not
   * continue the chain; the reader then feeds those rows through addRow.
   */
  addCheckedSubtrees(
    firstSeq: number, firstPrevHash: string, lastHash: string, count: number, levels: Uint8Array, hashes: Buffer, subtrees: number,
    ts?: Parameters<ChainVerifier['addCheckedSubtrees']>[7],
  ): boolean {
    const open = this.#open!;
    if (!open.verifier.addCheckedSubtrees(firstSeq, firstPrevHash, lastHash, count, levels, hashes, subtrees, ts)) return false;
    open.lastSeq = firstSeq + count - 1;
    const before = this.#events;
    this.#events += count;
    if (Math.floor(before / PROGRESS_EVERY) !== Math.floor(this.#events / PROGRESS_EVERY)) this.#options.onProgress?.(this.#events);
    return true;
  }

  /** A record that could not be read as an event at all: the log is damaged right after the last good one. */
  brokenRecord(reason: string): void {
    const open = this.#open!;
    const seq = open.lastSeq + 1;
    if (open.broken === null || seq < open.broken.seq) open.broken = { seq, reason: `event ${seq}: ${reason}` };
  }

  /**
   * An event of an account already verified, found later in the input (an export line moved
   * or added outside its account's group): that account's verdict becomes tampered at the
   * event's seq, unless it already names one at or before it (the first finding stands).
   */
  outOfPlace(accountId: string, seq: number | null, reason: string): void {
    const verdict = this.#verdicts.get(accountId)!;
    const at = seq !== null && Number.isSafeInteger(seq) && seq >= 1 ? seq : null;
    if (verdict.reason !== null && (at === null || (verdict.first_bad_seq !== null && verdict.first_bad_seq <= at))) return;
    verdict.first_bad_seq = at ?? verdict.first_bad_seq;
    verdict.reason = at === null ? reason : `event ${at}: ${reason}`;
    verdict.warnings = [];
  }

  endAccount(): void {
    const open = this.#open;
    if (open === null) return;
    this.#open = null;
    const verdict = open.verifier.finish();
    const broken = open.broken;
    if (broken !== null && (verdict.first_bad_seq === null || broken.seq <= verdict.first_bad_seq)) {
      verdict.first_bad_seq = broken.seq;
      verdict.reason = broken.reason;
    }
    const policy = this.#options.witnesses;
    if (policy !== undefined && verdict.reason === null) {
      // Checked last: an intact log whose newest checkpoint no witness saw is still refused.
      const newest = open.newest;
      const shortfall = newest === null ? 'no checkpoint for witnesses to have cosigned' : witnessShortfall(newest.note, policy);
      if (shortfall !== null) {
        const size = newest === null ? 0 : Number(newest.tree_size);
        verdict.first_bad_seq = Math.max(size, 1);
        verdict.reason = newest === null
          ? `not witnessed: ${shortfall}`
          : `not witnessed: the newest checkpoint (size ${size}) has ${shortfall}; the log may have been rolled back or forked`;
      }
    }
    if (verdict.reason === null) {
      const tail = unsignedTailWarning(verdict.events, open.signedSize);
      if (tail !== null) verdict.warnings.push(tail);
      // The service makes an account's data key with its first event: a key and no event is an
      // input that lost them (an export cut after its header), not an empty account.
      if (verdict.events === 0 && open.hasDataKey) verdict.warnings.push(NO_EVENTS_BUT_A_DATA_KEY);
    } else {
      // Warnings are only for an account that is otherwise intact (docs/cli.md#gatehouse-verify):
      // a tampered one gets its verdict alone. Two events swapped also send time backwards.
      verdict.warnings = [];
    }
    this.#verdicts.set(verdict.account_id, verdict);
  }

  /** Every verdict, in account order; accounts of given checkpoints missing from the log are verified as empty. */
  finish(): AccountVerdict[] {
    this.endAccount();
    for (const accountId of this.givenAccounts()) {
      if (!this.#verdicts.has(accountId)) {
        this.beginAccount({ accountId, checkpoints: [] });
        this.endAccount();
      }
    }
    this.#options.onProgress?.(this.#events);
    return [...this.#verdicts.values()].sort((a, b) => (a.account_id < b.account_id ? -1 : a.account_id > b.account_id ? 1 : 0));
  }
}
