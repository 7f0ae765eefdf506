/**
 * `--checkpoint FILE`: a checkpoint the user saved earlier (the JSON the API returns, or just
 * its note text). The log must contain it as a prefix: that is what catches a cut-off tail or
 * a rollback, which the log alone cannot show.
 */
import fs from 'node:fs';
import type { VerifierCheckpoint } from '../core/checkpoint-trust.js';
import { NoteError, noteFromSavedText, verifyNote } from '../core/note.js';
import { parseStrictJson } from '../core/strict-json.js';
import { VerifyInputError } from './errors.js';

export interface GivenCheckpoint {
  file: string;
  /** From the note's origin line `gatehouse/<ledger id>/<account id>` (not yet verified). */
  ledgerId: string;
  accountId: string;
  checkpoint: VerifierCheckpoint;
}

export function readGivenCheckpoint(file: string): GivenCheckpoint {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new VerifyInputError(`cannot read --checkpoint ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const checkpoint = text.trimStart().startsWith('{') ? fromJson(text, file) : { note: noteFromSavedText(text) };
  const origin = checkpoint.note.slice(0, checkpoint.note.indexOf('\n'));
  const match = /^gatehouse\/([^/\s]+)\/([^/\s]+)$/.exec(origin);
  if (!match) throw new VerifyInputError(`--checkpoint ${file} is not a Gatehouse checkpoint (its first line is not gatehouse/<ledger id>/<account id>)`);
  refuseMalformedNote(checkpoint.note, file);
  return { file, ledgerId: match[1]!, accountId: match[2]!, checkpoint };
}

/**
 * A note whose structure is broken (no signature block, a garbled signature line) is a file
 * that is not a checkpoint, which is the command's input error (exit 2), not evidence that the
 * log was tampered with: the user's own saved copy says nothing about the log. Whether its
 * signatures verify, and by whom, is judged later against the trusted keys (exit 1 if not).
 */
function refuseMalformedNote(note: string, file: string): void {
  try {
    verifyNote(note, []); // no key known: every signature line is parsed, none is checked
  } catch (error) {
    if (error instanceof NoteError && error.code === 'malformed_note') {
      throw new VerifyInputError(`--checkpoint ${file} is not a signed checkpoint note: ${error.message}`);
    }
    // unverified_note: well formed (by no trusted key, here: none was given).
  }
}

function fromJson(text: string, file: string): VerifierCheckpoint {
  let parsed: unknown;
  try {
    parsed = parseStrictJson(text); // untrusted input: a member named twice is refused, not the last one kept
  } catch (error) {
    throw new VerifyInputError(`--checkpoint ${file} starts like JSON but does not parse: ${(error as Error).message}`);
  }
  const c = parsed as Record<string, unknown> | null;
  if (typeof c?.note !== 'string') throw new VerifyInputError(`--checkpoint ${file} has no "note" (expected a checkpoint as GET /v1/audit/checkpoints/latest returns it)`);
  if (c.tree_size !== undefined && typeof c.tree_size !== 'number') throw new VerifyInputError(`--checkpoint ${file}: tree_size is not a number`);
  if (c.root_hash !== undefined && typeof c.root_hash !== 'string') throw new VerifyInputError(`--checkpoint ${file}: root_hash is not a string`);
  if (c.account_id !== undefined && typeof c.account_id !== 'string') throw new VerifyInputError(`--checkpoint ${file}: account_id is not a string`);
  return {
    note: c.note, tree_size: c.tree_size as number | undefined, root_hash: c.root_hash as string | undefined, account_id: c.account_id as string | undefined,
  };
}
