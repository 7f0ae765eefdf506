/**
 * Evidence files (`gatehouse prove`, `gatehouse verify-evidence`): one event, a signed
 * checkpoint, the RFC 9162 inclusion proof between them and the log's public keys, so anyone
 * can check that this event was recorded, exactly so, in the log the checkpoint commits to,
 * without the log. Checked here with nothing but this file and the keys the verifier trusts.
 *
 *   {"format": "gatehouse-evidence", "version": 1, "ledger_id",
 *    "event": {"header", "hash", "payload"}, "checkpoint": {…as the API returns…},
 *    "inclusion": {"account_id", "seq", "tree_size", "leaf_index", "hashes"}, "keys": [...]}
 */
import { type CosignerKey, checkCosignatures } from './cosignature.js';
import { eventHash } from './event-hash.js';
import type { EventHeader } from './event-shape.js';
import { HEX64, headerProblem } from './event-shape.js';
import { sha256Hex } from './hash.js';
import { leafHash } from './merkle.js';
import { verifyInclusion } from './merkle-proof.js';
import { NoteError, parseCheckpointBody, verifyNote } from './note.js';
import { checkpointOrigin, logKeysFromList } from './log-keys.js';
import { type NoteVerifierKey, SigningKeyError, decodeStdBase64 } from './signing-key.js';
import { JsonInputError, parseStrictJson } from './strict-json.js';

export const EVIDENCE_FORMAT = 'gatehouse-evidence';

export interface EvidenceOptions {
  /** The log keys to trust; null: the file's own `keys` (not pinned). */
  trustedKeys: NoteVerifierKey[] | null;
  witnesses: CosignerKey[];
  /** Valid cosignatures by distinct `witnesses` the checkpoint must carry (0: none asked). */
  minWitnesses: number;
}

export type EvidenceVerdict =
  | { ok: true; account_id: string; seq: number; tree_size: number; cosignatures: number }
  | { ok: false; reason: string };

class Invalid extends Error {}

/**
 * The value is not an evidence file this verifier reads: another kind of file, or a version a
 * later Gatehouse wrote. That is the wrong input (a verifier exits 2), not a verdict: only a
 * file that says it is gatehouse-evidence version 1 can be found invalid.
 */
export class NotEvidenceError extends Error {
  override name = 'NotEvidenceError';
}

/** Why `value` is not an evidence file this verifier reads (see NotEvidenceError), or null. */
export function notEvidenceProblem(value: unknown): string | null {
  const { format, version } = (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<string, unknown>;
  if (format !== EVIDENCE_FORMAT) return `not a Gatehouse evidence file (its "format" is not "${EVIDENCE_FORMAT}")`;
  if (version !== 1) return `a Gatehouse evidence file of version ${JSON.stringify(version)}; this verifier reads version 1`;
  return null;
}

const fail = (reason: string): never => {
  throw new Invalid(reason);
};

function object(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(`${what} is not an object`);
  return value as Record<string, unknown>;
}

/** How prove names the format (JSON.stringify, or the same with spaces): found in bytes that are no JSON. */
const NAMES_ITSELF_EVIDENCE = new RegExp(`"format"\\s*:\\s*"${EVIDENCE_FORMAT}"`);

/**
 * An evidence file's bytes as a verifier reads them: strictly (src/core/strict-json.ts), so that
 * no repeated member name, invalid UTF-8 or unsafe number is read one way here and another by
 * the next reader. Throws NotEvidenceError for bytes that are no JSON or no evidence file.
 *
 * Bytes that only a lenient reader (JSON.parse) takes for an evidence file are one that was
 * altered after `gatehouse prove` wrote it, since prove writes JSON.stringify of its own values:
 * `altered` then says why, for an INVALID verdict, and `evidence` is the lenient reading, kept
 * only to name the ledger whose keys the verifier reads; it is never verified.
 */
export function parseEvidenceFile(bytes: Uint8Array): { evidence: unknown; altered: string | null } {
  let strict: JsonInputError;
  try {
    const evidence = parseStrictJson(bytes);
    const problem = notEvidenceProblem(evidence);
    if (problem !== null) throw new NotEvidenceError(problem);
    return { evidence, altered: null };
  } catch (error) {
    if (!(error instanceof JsonInputError)) throw error;
    strict = error;
  }
  let lenient: unknown = null;
  try {
    lenient = JSON.parse(Buffer.from(bytes).toString('utf8')); // only to tell an altered evidence file from another file
  } catch {
    // no JSON even to a lenient reader: the wrong file
  }
  if (notEvidenceProblem(lenient) === null) {
    return { evidence: lenient, altered: `the file is not strict JSON: ${strict.message}; gatehouse prove never writes that: the file was altered` };
  }
  // No JSON at all, but it names itself evidence as prove writes it: an evidence file with a
  // byte changed in its syntax is an altered one (INVALID), as a broken line of an export is
  // TAMPERED, not the wrong file.
  if (NAMES_ITSELF_EVIDENCE.test(Buffer.from(bytes).toString('latin1'))) {
    return { evidence: null, altered: `the file is not JSON: ${strict.message}; it names itself a ${EVIDENCE_FORMAT} file: the file was altered` };
  }
  throw new NotEvidenceError(`not strict JSON: ${strict.message}`);
}

/** The verdict on an evidence file; throws NotEvidenceError when it is none this verifier reads. */
export function verifyEvidence(evidence: unknown, options: EvidenceOptions): EvidenceVerdict {
  const notEvidence = notEvidenceProblem(evidence);
  if (notEvidence !== null) throw new NotEvidenceError(notEvidence);
  try {
    return check(evidence, options);
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, reason: error.message };
    throw error;
  }
}

function check(evidence: unknown, options: EvidenceOptions): EvidenceVerdict {
  const file = evidence as Record<string, unknown>; // an object, format and version checked by verifyEvidence
  if (typeof file.ledger_id !== 'string' || file.ledger_id === '') fail('no ledger_id');
  const ledgerId = file.ledger_id as string;

  // The event: its hash from its header, its payload against payload_hash.
  const event = object(file.event, 'event');
  const problem = headerProblem(event.header);
  if (problem !== null) fail(`event header: ${problem}`);
  const header = event.header as EventHeader;
  if (typeof event.hash !== 'string' || !HEX64.test(event.hash)) fail('event hash is not 64 lowercase hex digits');
  if (eventHash(header) !== event.hash) fail(`event ${header.seq}: its hash does not match its header`);
  if (event.payload !== null && event.payload !== undefined) {
    const payload = typeof event.payload === 'string' ? decodeStdBase64(event.payload) : null;
    if (payload === null) fail(`event ${header.seq}: payload is not base64`);
    if (header.payload_hash !== sha256Hex(payload!)) fail(`event ${header.seq}: its payload does not match payload_hash`);
  }

  // The checkpoint: signed by a trusted log key, for this ledger and account.
  let trusted = options.trustedKeys;
  if (trusted === null) {
    try {
      trusted = logKeysFromList(file.keys, ledgerId);
    } catch (error) {
      if (error instanceof SigningKeyError) fail(`keys: ${error.message}`);
      throw error;
    }
  }
  const checkpoint = object(file.checkpoint, 'checkpoint');
  if (typeof checkpoint.note !== 'string') fail('checkpoint has no note');
  const note = checkpoint.note as string;
  let body = '';
  try {
    body = verifyNote(note, trusted!).body;
  } catch (error) {
    if (!(error instanceof NoteError)) throw error;
    fail(error.code === 'unverified_note' ? 'the checkpoint is not signed by a trusted log key' : `the checkpoint's signature: ${error.message}`);
  }
  let signed;
  try {
    signed = parseCheckpointBody(body);
  } catch (error) {
    if (!(error instanceof NoteError)) throw error;
    return fail(`checkpoint: ${error.message}`);
  }
  const origin = checkpointOrigin(ledgerId, header.account_id);
  if (signed.origin !== origin) fail(`the checkpoint's origin is ${JSON.stringify(signed.origin)}, not ${JSON.stringify(origin)}`);
  const rootHex = Buffer.from(signed.rootHash).toString('hex');
  if (checkpoint.tree_size !== signed.treeSize) fail('the checkpoint\'s tree_size differs from its signed note');
  if (checkpoint.root_hash !== rootHex) fail('the checkpoint\'s root_hash differs from its signed note');
  if (checkpoint.account_id !== header.account_id) fail('the checkpoint\'s account_id differs from the event\'s');

  // The inclusion proof: the event's leaf up to the signed root.
  const inclusion = object(file.inclusion, 'inclusion');
  if (inclusion.account_id !== header.account_id || inclusion.seq !== header.seq) fail('the inclusion proof is for another event');
  if (inclusion.tree_size !== signed.treeSize) fail('the inclusion proof is for another tree size than the checkpoint');
  if (inclusion.leaf_index !== header.seq - 1) fail('the inclusion proof\'s leaf_index is not seq - 1');
  const hashes = inclusion.hashes;
  if (!Array.isArray(hashes) || !hashes.every((h) => typeof h === 'string' && HEX64.test(h))) fail('the inclusion proof\'s hashes are not 64-hex-digit strings');
  const proof = (hashes as string[]).map((h) => Buffer.from(h, 'hex'));
  if (!verifyInclusion(leafHash(Buffer.from(event.hash as string, 'hex')), header.seq - 1, signed.treeSize, proof, signed.rootHash)) {
    fail(`the inclusion proof does not lead from event ${header.seq} to the checkpoint's root at size ${signed.treeSize}`);
  }

  // Witnesses, when asked for.
  const { valid, invalid } = checkCosignatures(note, options.witnesses);
  if (valid.length < options.minWitnesses) {
    fail(`${valid.length} valid witness cosignature${valid.length === 1 ? '' : 's'}${invalid.length > 0 ? ` (${invalid.length} invalid)` : ''}, ${options.minWitnesses} required`);
  }
  return { ok: true, account_id: header.account_id, seq: header.seq, tree_size: signed.treeSize, cosignatures: valid.length };
}
