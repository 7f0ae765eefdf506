/**
 * Which keys `gatehouse verify` trusts to have signed checkpoints. Pinned keys come from the
 * user (`--public-key`, `--keys`); without them verify falls back to keys it finds next to the
 * data (the data dir's signing.key, or an export's header) and says that they are not pinned:
 * whoever could rewrite the log could have replaced those too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { logKeyFrom, logKeyName, logKeysFromList } from '../core/log-keys.js';
import { type NoteVerifierKey, SigningKeyError, noteVerifierKey, signingKeyFromSeed } from '../core/signing-key.js';
import { JsonInputError, parseStrictJson } from '../core/strict-json.js';
import { VerifyInputError } from './errors.js';
import { readKeyFile } from './key-file.js';

/** `--public-key`: a note verifier key `<name>+<hash>+<key>`, or a raw Ed25519 key in base64. */
export function parsePublicKey(text: string, ledgerId: string | null, source = '--public-key'): NoteVerifierKey {
  return asInputError(source, () => logKeyFrom(text, ledgerId));
}

/** Keys as `GET /v1/keys` lists them (`{"keys": [{note_verifier, public_key}]}`), or the bare array. */
export function keysFromList(list: unknown, ledgerId: string | null, source: string): NoteVerifierKey[] {
  return asInputError(source, () => logKeysFromList(list, ledgerId));
}

/** The core's key errors, named after the option or file they came from. */
function asInputError<T>(source: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof SigningKeyError) throw new VerifyInputError(`${source}: ${error.message}`);
    throw error;
  }
}

/** `--keys FILE`. */
export function keysFromFile(file: string, ledgerId: string | null): NoteVerifierKey[] {
  let parsed: unknown;
  try {
    // Untrusted input, read strictly (a key named twice is refused, not the last one kept);
    // its shape is checked by keysFromList.
    parsed = parseStrictJson(fs.readFileSync(file));
  } catch (error) {
    const why = error instanceof JsonInputError ? error.message : (error as NodeJS.ErrnoException).code ?? String(error);
    throw new VerifyInputError(`cannot read --keys ${file}: ${why}`);
  }
  return keysFromList(parsed, ledgerId, `--keys ${file}`);
}

/** The data dir's signing key, reduced to its public half. */
export function keysFromDataDir(dataDir: string, ledgerId: string | null): NoteVerifierKey[] {
  if (ledgerId === null) throw new VerifyInputError('the ledger id is unknown, so the data dir key cannot be named; pass --public-key or --keys');
  const seed = readKeyFile(path.join(dataDir, 'signing.key'), 'signing key');
  return [noteVerifierKey(signingKeyFromSeed(seed, logKeyName(ledgerId)))];
}
