/**
 * The log's public keys as users pin them (docs/formats.md#keys-json): a note verifier key
 * `<name>+<hash>+<key>`, or a raw base64 Ed25519 key named after the ledger, alone or listed as
 * `GET /v1/keys` lists them, and the names they sign under. One reading for `gatehouse verify`
 * and `gatehouse verify-evidence`.
 * Untrusted input: every failure is a SigningKeyError saying what is wrong.
 */
import { type NoteVerifierKey, SigningKeyError, decodeStdBase64, noteKeyHash, parseNoteVerifier } from './signing-key.js';

/** The note key name of a ledger's log key (docs/formats.md#checkpoints). */
export function logKeyName(ledgerId: string): string {
  return `gatehouse/${ledgerId}`;
}

/** C2SP tlog-checkpoint origin: one log per account inside one ledger. */
export function checkpointOrigin(ledgerId: string, accountId: string): string {
  return `${logKeyName(ledgerId)}/${accountId}`;
}

const NOTE_VERIFIER = /^[^+\s]+\+[0-9a-f]{8}\+/;

/** One key; a raw key needs the ledger id to be named. */
export function logKeyFrom(text: string, ledgerId: string | null): NoteVerifierKey {
  const trimmed = text.trim();
  if (NOTE_VERIFIER.test(trimmed)) return parseNoteVerifier(trimmed);
  const raw = decodeStdBase64(trimmed);
  if (raw === null || raw.length !== 32) throw new SigningKeyError('must be a note verifier key (name+hash+key) or a 32-byte Ed25519 public key in base64');
  if (ledgerId === null) throw new SigningKeyError('a raw public key needs the ledger id to name it; give the note verifier key instead');
  const name = logKeyName(ledgerId);
  return { name, keyHash: noteKeyHash(name, raw), publicKey: raw };
}

/** The keys of a `GET /v1/keys` body, or its bare `keys` array. */
export function logKeysFromList(list: unknown, ledgerId: string | null): NoteVerifierKey[] {
  const entries = Array.isArray(list) ? list : (list as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(entries) || entries.length === 0) throw new SigningKeyError('lists no keys (expected {"keys": [...]} as GET /v1/keys returns)');
  return entries.map((entry, i) => {
    const e = entry as { note_verifier?: unknown; public_key?: unknown } | null;
    const text = typeof e?.note_verifier === 'string' ? e.note_verifier : typeof e?.public_key === 'string' ? e.public_key : null;
    if (text === null) throw new SigningKeyError(`key ${i} has neither note_verifier nor public_key`);
    try {
      const key = logKeyFrom(text, ledgerId);
      // Both given: they must be one key, or a reader could check with the one a tool did not.
      if (text === e!.note_verifier && typeof e?.public_key === 'string') {
        const raw = decodeStdBase64(e.public_key.trim());
        if (raw === null || !Buffer.from(raw).equals(Buffer.from(key.publicKey))) throw new SigningKeyError('its public_key is not the key its note_verifier names');
      }
      return key;
    } catch (error) {
      if (error instanceof SigningKeyError) throw new SigningKeyError(`key ${i}: ${error.message}`);
      throw error;
    }
  });
}
