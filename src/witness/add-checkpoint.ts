/**
 * C2SP tlog-witness `POST /add-checkpoint`: the checks in the order the spec gives them and
 * their status codes. 404 unknown origin; 403 no trusted log signature verifies (or one
 * fails); 400 a malformed request or an old size above the checkpoint's; 409 (with the
 * witness's size, text/x.tlog.size) an old size other than the one it last cosigned, or the
 * size it cosigned with another root (a fork: the spec's 409, with the same body, so a client
 * that retries from the size it is told sees it refused the same size twice); 422 a proof that
 * does not verify, a non-empty proof from 0, or a size-0 checkpoint whose root is not the empty
 * tree's. Otherwise it persists the checkpoint and answers the cosignature line.
 */
import { createHash } from 'node:crypto';
import { cosign } from '../core/cosignature.js';
import { emptyRoot } from '../core/merkle.js';
import { verifyConsistency } from '../core/merkle-proof.js';
import { NoteError, verifyNote } from '../core/note.js';
import type { NoteVerifierKey } from '../core/signing-key.js';
import { decodeStdBase64 } from '../core/signing-key.js';
import { AddCheckpointSyntaxError, parseAddCheckpoint } from '../core/tlog-witness.js';
import type { WitnessIdentity } from './witness-key.js';
import type { WitnessStore } from './witness-store.js';

/** `--log ORIGIN_PREFIX=VERIFIER_KEY`: checkpoints whose origin starts with the prefix must be signed by the key. */
export interface TrustedLog {
  originPrefix: string;
  key: NoteVerifierKey;
}

export interface WitnessResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface WitnessDeps {
  identity: WitnessIdentity;
  logs: readonly TrustedLog[];
  store: WitnessStore;
  /** Epoch milliseconds. */
  now(): number;
}

const text = (status: number, body: string, contentType = 'text/plain; charset=utf-8'): WitnessResponse => ({ status, contentType, body });

interface CheckpointFields {
  origin: string;
  size: number;
  root: Uint8Array;
  body: string;
}

/** The first three lines of a checkpoint body (extension lines are allowed and signed over). */
function parseBody(body: string): CheckpointFields | null {
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) return null;
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin === '' || !/^(?:0|[1-9][0-9]{0,15})$/.test(sizeText)) return null;
  const size = Number(sizeText);
  const root = decodeStdBase64(rootText);
  if (!Number.isSafeInteger(size) || root === null || root.length !== 32) return null;
  return { origin, size, root, body };
}

export function originHash(origin: string): string {
  return createHash('sha256').update(origin, 'utf8').digest('hex');
}

export function addCheckpoint(requestBody: string, deps: WitnessDeps): WitnessResponse {
  let request;
  try {
    request = parseAddCheckpoint(requestBody);
  } catch (error) {
    if (error instanceof AddCheckpointSyntaxError) return text(400, `malformed request: ${error.message}\n`);
    throw error;
  }
  const origin = request.note.slice(0, Math.max(0, request.note.indexOf('\n')));
  const keys = deps.logs.filter((l) => origin !== '' && origin.startsWith(l.originPrefix)).map((l) => l.key);
  if (keys.length === 0) return text(404, 'unknown log origin\n');
  let body: string;
  try {
    body = verifyNote(request.note, keys).body;
  } catch (error) {
    if (!(error instanceof NoteError)) throw error;
    if (error.code === 'malformed_note') return text(400, `malformed checkpoint note: ${error.message}\n`);
    return text(403, 'no trusted log signature verifies\n');
  }
  const checkpoint = parseBody(body);
  if (checkpoint === null || checkpoint.origin !== origin) return text(400, 'malformed checkpoint\n');
  const { oldSize, proof } = request;
  if (oldSize > checkpoint.size) return text(400, 'old size is greater than the checkpoint size\n');
  if (checkpoint.size === 0 && !Buffer.from(checkpoint.root).equals(emptyRoot())) return text(422, 'a checkpoint of size 0 must have the empty tree root\n');

  return deps.store.checkAndPersist<WitnessResponse>(origin, (current) => {
    const currentSize = current?.size ?? 0;
    if (oldSize !== currentSize) return { persist: null, result: text(409, `${currentSize}\n`, 'text/x.tlog.size') };
    if (oldSize === 0) {
      if (proof.length !== 0) return { persist: null, result: text(422, 'the consistency proof from size 0 must be empty\n') };
    } else if (oldSize === checkpoint.size) {
      if (!Buffer.from(current!.root).equals(Buffer.from(checkpoint.root))) {
        return { persist: null, result: text(409, `${currentSize}\n`, 'text/x.tlog.size') };
      }
    } else if (!verifyConsistency(oldSize, checkpoint.size, proof, current!.root, checkpoint.root)) {
      return { persist: null, result: text(422, 'the consistency proof does not verify\n') };
    }
    const line = cosign(body, deps.identity.name, deps.identity.key, Math.floor(deps.now() / 1000));
    const cosigned = `${request.note}${line}\n`;
    return { persist: { origin, size: checkpoint.size, root: checkpoint.root, note: cosigned }, result: text(200, `${line}\n`) };
  });
}
