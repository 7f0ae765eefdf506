/**
 * `--checkpoint FILE` of `gatehouse verify` and `gatehouse prove`: a checkpoint the user saved
 * earlier (the JSON the API returns, or just its note text). One reader for both verbs, so that
 * neither accepts a file the other refuses, and both say the same about it. What a refusal
 * means is each verb's own: verify maps SavedCheckpointFileError to unreadable input, prove to
 * a bad option value (docs/cli.md).
 *
 * It lives with verify's other readers of the user's files: src/core reads no files, and
 * src/ledger is out of verify's reach (verify stays an offline tool on src/core).
 */
import fs from 'node:fs';
import type { VerifierCheckpoint } from '../core/checkpoint-trust.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import { NoteError, noteFromSavedText, verifyNote } from '../core/note.js';
import { JsonInputError, parseStrictJson } from '../core/strict-json.js';

/** A file that is no saved checkpoint; the message names the file and what is wrong with it. */
export class SavedCheckpointFileError extends Error {
  override name = 'SavedCheckpointFileError';
}

export interface SavedCheckpointFile {
  file: string;
  /** From the note's origin line `gatehouse/<ledger id>/<account id>` (not yet verified). */
  ledgerId: string;
  accountId: string;
  /** Only read, not trusted: its signatures and its members are judged by the caller. */
  checkpoint: VerifierCheckpoint;
}

export function readSavedCheckpointFile(file: string): SavedCheckpointFile {
  const bytes = readBytes(file);
  const text = bytes.toString('utf8');
  const checkpoint = text.trimStart().startsWith('{') ? fromJson(bytes, file) : { note: noteFromSavedText(text) };
  const origin = checkpoint.note.slice(0, checkpoint.note.indexOf('\n'));
  const match = /^gatehouse\/([^/\s]+)\/([^/\s]+)$/.exec(origin);
  if (!match) throw new SavedCheckpointFileError(`--checkpoint ${file} is not a Gatehouse checkpoint (its first line is not gatehouse/<ledger id>/<account id>)`);
  refuseMalformedNote(checkpoint.note, file);
  return { file, ledgerId: match[1]!, accountId: match[2]!, checkpoint };
}

function readBytes(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new SavedCheckpointFileError(`cannot read --checkpoint ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

/**
 * Untrusted input, read strictly from its bytes: with two `tree_size` members (or invalid UTF-8)
 * a lenient reader would compare one value with the log while another reader saw the other.
 * Members other than these four are the API's (`cosignatures`, …) and are ignored.
 */
function fromJson(bytes: Buffer, file: string): VerifierCheckpoint {
  let parsed: JsonValue;
  try {
    parsed = parseStrictJson(bytes);
  } catch (error) {
    if (error instanceof JsonInputError) throw new SavedCheckpointFileError(`--checkpoint ${file} is not strict JSON: ${error.message}`);
    throw error;
  }
  const c: Partial<JsonObject> = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  if (typeof c.note !== 'string') {
    throw new SavedCheckpointFileError(`--checkpoint ${file} has no "note" string (expected a checkpoint as GET /v1/audit/checkpoints/latest returns it)`);
  }
  if (c.tree_size !== undefined && typeof c.tree_size !== 'number') throw new SavedCheckpointFileError(`--checkpoint ${file}: tree_size is not a number`);
  if (c.root_hash !== undefined && typeof c.root_hash !== 'string') throw new SavedCheckpointFileError(`--checkpoint ${file}: root_hash is not a string`);
  if (c.account_id !== undefined && typeof c.account_id !== 'string') throw new SavedCheckpointFileError(`--checkpoint ${file}: account_id is not a string`);
  return { note: c.note, tree_size: c.tree_size, root_hash: c.root_hash, account_id: c.account_id };
}

/**
 * A note whose structure is broken (no signature block, a garbled signature line, no newline
 * after its last signature) is a file that is not a checkpoint: the user's own saved copy says
 * nothing about the log. Whether its signatures verify, and by whom, the caller judges against
 * the keys it trusts or the checkpoints it holds.
 */
function refuseMalformedNote(note: string, file: string): void {
  try {
    verifyNote(note, []); // no key known: every signature line is parsed, none is checked
  } catch (error) {
    if (error instanceof NoteError && error.code === 'malformed_note') {
      throw new SavedCheckpointFileError(`--checkpoint ${file} is not a signed checkpoint note: ${error.message}`);
    }
    // unverified_note: well formed (by no trusted key, here: none was given).
  }
}
