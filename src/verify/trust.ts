/**
 * Which keys `gatehouse verify` trusts to have signed checkpoints. Pinned keys come from the
 * user (`--public-key`, `--keys`); without them verify falls back to keys it finds next to the
 * data (the data dir's signing.key, or an export's header) and says that they are not pinned:
 * whoever could rewrite the log could have replaced those too.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  type NoteVerifierKey,
  SigningKeyError,
  decodeStdBase64,
  noteKeyHash,
  noteVerifierKey,
  parseNoteVerifier,
  signingKeyFromSeed,
} from '../core/signing-key.js';
import { VerifyInputError } from './errors.js';
import { readKeyFile } from './key-file.js';

/** The note key name of a ledger's log key (docs/formats.md#checkpoints). */
export function logKeyName(ledgerId: string): string {
  return `gatehouse/${ledgerId}`;
}

const NOTE_VERIFIER = /^[^+\s]+\+[0-9a-f]{8}\+/;

/** `--public-key`: a note verifier key `<name>+<hash>+<key>`, or a raw Ed25519 key in base64. */
export function parsePublicKey(text: string, ledgerId: string | null, source = '--public-key'): NoteVerifierKey {
  const trimmed = text.trim();
  if (NOTE_VERIFIER.test(trimmed)) {
    try {
      return parseNoteVerifier(trimmed);
    } catch (error) {
      if (error instanceof SigningKeyError) throw new VerifyInputError(`${source}: ${error.message}`);
      throw error;
    }
  }
  const raw = decodeStdBase64(trimmed);
  if (raw === null || raw.length !== 32) {
    throw new VerifyInputError(`${source} must be a note verifier key (name+hash+key) or a 32-byte Ed25519 public key in base64`);
  }
  if (ledgerId === null) {
    throw new VerifyInputError(`${source}: a raw public key needs the ledger id to name it; give the note verifier key instead`);
  }
  const name = logKeyName(ledgerId);
  return { name, keyHash: noteKeyHash(name, raw), publicKey: raw };
}

/** Keys as `GET /v1/keys` lists them (`{"keys": [{note_verifier, public_key}]}`), or the bare array. */
export function keysFromList(list: unknown, ledgerId: string | null, source: string): NoteVerifierKey[] {
  const entries = Array.isArray(list) ? list : (list as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(entries) || entries.length === 0) throw new VerifyInputError(`${source} lists no keys (expected {"keys": [...]} as GET /v1/keys returns)`);
  return entries.map((entry, i) => {
    const e = entry as { note_verifier?: unknown; public_key?: unknown } | null;
    const text = typeof e?.note_verifier === 'string' ? e.note_verifier : typeof e?.public_key === 'string' ? e.public_key : null;
    if (text === null) throw new VerifyInputError(`${source}: key ${i} has neither note_verifier nor public_key`);
    return parsePublicKey(text, ledgerId, `${source} key ${i}`);
  });
}

/** `--keys FILE`. */
export function keysFromFile(file: string, ledgerId: string | null): NoteVerifierKey[] {
  let parsed: unknown;
  try {
    // Untrusted input: parsed inside try, shape checked by keysFromList.
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? 'not JSON';
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
