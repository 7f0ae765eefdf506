/**
 * C2SP signed notes (https://c2sp.org/signed-note, the format of Go's sumdb/note) and the
 * tlog-checkpoint body (https://c2sp.org/tlog-checkpoint).
 *
 *   <body lines, each ending "\n">
 *   "\n"
 *   "— <key name> <base64(4-byte key hash ‖ 64-byte Ed25519 signature)>\n"   (one or more)
 *
 * The signature is over the body bytes (UTF-8, including its final newline).
 */
import {
  type NoteVerifierKey,
  type SigningKey,
  decodeStdBase64,
  isValidKeyName,
  noteKeyHash,
  sign,
  verifyDetached,
} from './signing-key.js';

export type NoteErrorCode =
  | 'malformed_note' // not a signed note at all
  | 'unverified_note' // no signature by a known key
  | 'invalid_signature' // a known key's signature does not verify
  | 'malformed_checkpoint'; // the body is not a tlog-checkpoint as Gatehouse writes it

export class NoteError extends Error {
  override name = 'NoteError';
  constructor(
    readonly code: NoteErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The signature line prefix: EM DASH U+2014 and a space. */
export const SIG_PREFIX = '\u2014 ';
const MAX_SIGNATURES = 100;
const utf8 = new TextEncoder();
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A note split where its signatures begin (after the last blank line), nothing checked: the
 * body with its final newline, and the non-empty lines after it. Null without a blank line. For
 * readers that compare or pick out signature lines; verifyNote parses strictly on its own.
 */
export function splitNote(note: string): { body: string; signatureLines: string[] } | null {
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return null;
  return { body: note.slice(0, split + 1), signatureLines: note.slice(split + 2).split('\n').filter((line) => line !== '') };
}

/**
 * A note as saved to a file by hand: `jq -r .note` or `echo` add a newline after the note's own
 * last one. A signed note never ends with a blank line (its last signature line ends it), so
 * newlines past the first at the end are the file's, not the note's, and are dropped. Nothing
 * signed changes: the signatures cover the body, before the blank line.
 */
export function noteFromSavedText(text: string): string {
  return text.replace(/\n\n+$/, '\n');
}

/** The tlog-checkpoint body: origin, decimal tree size, base64 root hash; no extension lines. */
export function checkpointBody(origin: string, treeSize: number, rootHash: Uint8Array): string {
  if (origin === '' || /[\u0000-\u001f\u007f]/.test(origin)) throw new NoteError('malformed_checkpoint', 'origin must be a non-empty line');
  if (!Number.isSafeInteger(treeSize) || treeSize < 0) throw new NoteError('malformed_checkpoint', `bad tree size ${treeSize}`);
  if (rootHash.length !== 32) throw new NoteError('malformed_checkpoint', 'root hash must be 32 bytes');
  return `${origin}\n${treeSize}\n${Buffer.from(rootHash).toString('base64')}\n`;
}

/** The note: the body, a blank line, and one signature line by `key`. */
export function signNote(body: string, key: SigningKey): string {
  checkBody(body);
  const signature = sign(key, utf8.encode(body));
  const blob = Buffer.alloc(4 + 64);
  blob.writeUInt32BE(noteKeyHash(key.name, key.publicKey), 0);
  blob.set(signature, 4);
  return `${body}\n${SIG_PREFIX}${key.name} ${blob.toString('base64')}\n`;
}

function checkBody(body: string): void {
  if (body === '' || !body.endsWith('\n')) throw new NoteError('malformed_note', 'note body must be non-empty and end with a newline');
  if (body.includes('\n\n')) throw new NoteError('malformed_note', 'note body must not contain a blank line');
  checkText(body);
}

/** Valid UTF-8 (a well-formed JS string) with no control characters other than newline. */
function checkText(text: string): void {
  if (LONE_SURROGATE.test(text)) throw new NoteError('malformed_note', 'note text has a lone surrogate');
  if (/[\u0000-\u0009\u000b-\u001f]/.test(text)) throw new NoteError('malformed_note', 'note text has a control character');
}

export interface VerifiedNote {
  /** The signed body, including its final newline. */
  body: string;
  /** Names of the known keys whose signatures verified. */
  verifiedBy: string[];
}

/**
 * Open a signed note as Go's note.Open does: every signature by a known key (name and key hash
 * both match) must verify; signatures by unknown keys (e.g. witness cosignatures) are ignored;
 * at least one known key must have signed.
 */
export function verifyNote(note: string, verifiers: ReadonlyArray<NoteVerifierKey>): VerifiedNote {
  if (typeof note !== 'string') throw new NoteError('malformed_note', 'note is not text');
  checkText(note);
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('malformed_note', 'no blank line before the signatures');
  const body = note.slice(0, split + 1);
  let sigs = note.slice(split + 2);
  if (sigs === '' || !sigs.endsWith('\n')) throw new NoteError('malformed_note', 'signature block must end with a newline');

  const bodyBytes = utf8.encode(body);
  const verifiedBy: string[] = [];
  const seen = new Set<string>();
  let count = 0;
  while (sigs.length > 0) {
    const nl = sigs.indexOf('\n');
    const line = sigs.slice(0, nl);
    sigs = sigs.slice(nl + 1);
    if (!line.startsWith(SIG_PREFIX)) throw new NoteError('malformed_note', 'signature line does not start with "\u2014 "');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    const name = space < 0 ? rest : rest.slice(0, space);
    const b64 = space < 0 ? '' : rest.slice(space + 1);
    const blob = b64 === '' ? null : decodeStdBase64(b64, false);
    if (blob === null || !isValidKeyName(name) || blob.length < 5) throw new NoteError('malformed_note', 'malformed signature line');
    if (++count > MAX_SIGNATURES) throw new NoteError('malformed_note', 'too many signatures');
    const keyHash = Buffer.from(blob.buffer, blob.byteOffset, 4).readUInt32BE(0);
    const verifier = verifiers.find((v) => v.name === name && v.keyHash >>> 0 === keyHash);
    if (verifier === undefined) continue; // unknown key: a witness cosignature, say
    const id = `${name}+${keyHash}`;
    if (seen.has(id)) continue;
    seen.add(id);
    if (!verifyDetached(verifier.publicKey, bodyBytes, blob.subarray(4))) {
      throw new NoteError('invalid_signature', `signature by ${name} does not verify`);
    }
    verifiedBy.push(name);
  }
  if (verifiedBy.length === 0) throw new NoteError('unverified_note', 'note is not signed by any trusted key');
  return { body, verifiedBy };
}

export interface Checkpoint {
  origin: string;
  treeSize: number;
  rootHash: Uint8Array;
}

/**
 * Parse a tlog-checkpoint body strictly as Gatehouse writes it: exactly three lines (origin,
 * decimal size without leading zeros, standard base64 of a 32-byte hash). Extension lines are
 * refused: the contract says none are written, so one is a sign of a foreign or forged note.
 */
export function parseCheckpointBody(body: string): Checkpoint {
  const bad = (why: string): never => {
    throw new NoteError('malformed_checkpoint', `malformed checkpoint: ${why}`);
  };
  if (typeof body !== 'string' || !body.endsWith('\n')) bad('body must end with a newline');
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) bad('expected origin, tree size and root hash lines');
  if (lines.length > 3) bad('unexpected extension lines');
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin === '') bad('empty origin');
  if (!/^(?:0|[1-9][0-9]*)$/.test(sizeText)) bad('tree size is not a decimal number');
  const treeSize = Number(sizeText);
  if (!Number.isSafeInteger(treeSize)) bad('tree size out of range');
  const rootHash = decodeStdBase64(rootText);
  if (rootHash === null || rootHash.length !== 32) bad('root hash is not base64 of 32 bytes');
  return { origin, treeSize, rootHash: rootHash! };
}
