/**
 * Whether a checkpoint can be trusted at all, before it is compared with the log: its note is
 * a C2SP signed note verified by a trusted key, its body is a checkpoint whose origin names
 * this ledger and account, and its JSON fields agree with the note (docs/formats.md#checkpoints, docs/cli.md#gatehouse-verify). What it
 * signs is then compared with the log's root by CheckpointRoots.
 *
 * A checkpoint that fails here says nothing about a particular event: the failure is
 * secondary (see FirstFailure), reported at the size the checkpoint claims.
 */
import type { FirstFailure } from './first-failure.js';
import { NoteError, parseCheckpointBody, verifyNote } from './note.js';
import type { NoteVerifierKey } from './signing-key.js';
import { checkpointOrigin } from './log-keys.js';

export interface VerifierCheckpoint {
  /** Optional for a checkpoint given as bare note text; when present it must match the note. */
  tree_size?: number;
  /** Hex; optional like tree_size. */
  root_hash?: string;
  /** Optional like tree_size; when present it must name the account of the note's origin. */
  account_id?: string;
  note: string;
}

/** What a trusted checkpoint signs: the log's size and its Merkle root (hex) at that size. */
export interface TrustedCheckpoint {
  treeSize: number;
  rootHex: string;
}

export class CheckpointTrust {
  readonly #accountId: string;
  readonly #trustedKeys: ReadonlyArray<NoteVerifierKey>;
  readonly #ledgerId: string | undefined;
  readonly #failures: FirstFailure;

  /** Without a ledger id, the origin may name any ledger whose key verified the note. */
  constructor(accountId: string, trustedKeys: ReadonlyArray<NoteVerifierKey>, ledgerId: string | undefined, failures: FirstFailure) {
    this.#accountId = accountId;
    this.#trustedKeys = trustedKeys;
    this.#ledgerId = ledgerId;
    this.#failures = failures;
  }

  /**
   * The size and root the checkpoint signs, or null when it is not trusted (the failure is
   * reported). `given` marks checkpoints the user supplied (--checkpoint) rather than stored ones.
   */
  check(checkpoint: VerifierCheckpoint, given: boolean): TrustedCheckpoint | null {
    const what = given ? 'given checkpoint' : 'stored checkpoint';
    const label = typeof checkpoint?.tree_size === 'number' ? `${what} at size ${checkpoint.tree_size}` : what;
    const claimed = claimedSize(checkpoint);
    let verifiedBy: string[];
    let body: string;
    // untrusted input: the note and its body are parsed inside try
    try {
      ({ body, verifiedBy } = verifyNote(checkpoint.note, this.#trustedKeys));
    } catch (err) {
      if (!(err instanceof NoteError)) throw err;
      this.#failures.report(claimed, `${label} ${whyUnverified(err)}`, true);
      return null;
    }
    let parsed;
    try {
      parsed = parseCheckpointBody(body);
    } catch (err) {
      if (!(err instanceof NoteError)) throw err;
      this.#failures.report(claimed, `${label}: ${err.message}`, true);
      return null;
    }
    const { origin, treeSize, rootHash } = parsed;
    // The note verified, so from here failures are reported at the size it signs.
    const at = Math.max(treeSize, 1);
    const expectedOrigins = this.#expectedOrigins(verifiedBy);
    if (!expectedOrigins.includes(origin)) {
      this.#failures.report(at, `${what} at size ${treeSize} has origin ${JSON.stringify(origin)}, not ${expectedOrigins.map((o) => JSON.stringify(o)).join(' or ') || 'gatehouse/<ledger id>/' + this.#accountId}`, true);
      return null;
    }
    const rootHex = Buffer.from(rootHash).toString('hex');
    if (checkpoint.tree_size !== undefined && checkpoint.tree_size !== treeSize) {
      this.#failures.report(at, `${what}: tree_size ${checkpoint.tree_size} differs from its signed note (${treeSize})`, true);
      return null;
    }
    if (checkpoint.root_hash !== undefined && checkpoint.root_hash !== rootHex) {
      this.#failures.report(at, `${what} at size ${treeSize}: root_hash differs from its signed note`, true);
      return null;
    }
    // The origin names this account (checked above), so an account_id that names another is a
    // JSON member edited apart from what was signed, like a root_hash or tree_size that differs.
    if (checkpoint.account_id !== undefined && checkpoint.account_id !== this.#accountId) {
      this.#failures.report(at, `${what} at size ${treeSize}: account_id ${JSON.stringify(checkpoint.account_id)} differs from its signed note (origin ${JSON.stringify(origin)})`, true);
      return null;
    }
    return { treeSize, rootHex };
  }

  /** `gatehouse/<ledger id>/<account id>`: the ledger id given, else that of each log key that verified the note. */
  #expectedOrigins(verifiedBy: string[]): string[] {
    return this.#ledgerId !== undefined
      ? [checkpointOrigin(this.#ledgerId, this.#accountId)]
      : verifiedBy.filter((n) => n.startsWith('gatehouse/')).map((n) => `${n}/${this.#accountId}`);
  }
}

function whyUnverified(err: NoteError): string {
  return err.code === 'unverified_note'
    ? 'is not signed by a trusted key'
    : err.code === 'invalid_signature'
      ? `has a bad signature (${err.message})`
      : `is not a signed note (${err.message})`;
}

/**
 * The size a checkpoint claims before its signature is checked: its JSON tree_size, else the
 * size line of its (unverified) note; at least 1, since a failure report names a seq. Also
 * where the parallel verify cuts its slices before the signatures are checked (run.ts
 * claimedSizes): a checkpoint check() trusts signs this size (or 0, which is never ahead of
 * the log), because a tree_size that differs from the note is refused.
 */
export function claimedSize(checkpoint: VerifierCheckpoint | null | undefined): number {
  return Math.max(statedSize(checkpoint) ?? 1, 1);
}

/** The size a checkpoint states, unverified: its JSON tree_size, else its note's size line; null when it states none. */
export function statedSize(checkpoint: VerifierCheckpoint | null | undefined): number | null {
  const fromJson = checkpoint?.tree_size;
  if (typeof fromJson === 'number' && Number.isSafeInteger(fromJson)) return fromJson;
  const note = checkpoint?.note;
  const line = typeof note === 'string' ? /^[^\n]*\n(\d{1,15})\n/.exec(note)?.[1] : undefined;
  return line === undefined ? null : Number(line);
}
