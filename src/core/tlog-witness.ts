/**
 * The request body of C2SP tlog-witness `POST /add-checkpoint`, written by the log and read by
 * the witness:
 *
 *   "old <size>\n"                 decimal, no leading zeros
 *   "<base64 hash>\n" × 0..63      the RFC 6962 consistency proof from <size>
 *   "\n"
 *   <the signed checkpoint note>
 */
import { decodeStdBase64 } from './signing-key.js';

export const MAX_PROOF_LINES = 63;

export interface AddCheckpointRequest {
  oldSize: number;
  proof: Uint8Array[];
  note: string;
}

export function formatAddCheckpoint(oldSize: number, proof: readonly Uint8Array[], note: string): string {
  if (proof.length > MAX_PROOF_LINES) throw new RangeError('a consistency proof has at most 63 hashes');
  return `old ${oldSize}\n${proof.map((h) => `${Buffer.from(h).toString('base64')}\n`).join('')}\n${note}`;
}

export class AddCheckpointSyntaxError extends Error {
  override name = 'AddCheckpointSyntaxError';
}

export function parseAddCheckpoint(text: string): AddCheckpointRequest {
  const bad = (why: string): never => {
    throw new AddCheckpointSyntaxError(why);
  };
  const first = text.indexOf('\n');
  if (first < 0) bad('no old size line');
  const sizeMatch = /^old (0|[1-9][0-9]{0,15})$/.exec(text.slice(0, first));
  if (sizeMatch === null) bad('the first line must be "old <size>"');
  const oldSize = Number(sizeMatch![1]);
  if (!Number.isSafeInteger(oldSize)) bad('old size out of range');
  const proof: Uint8Array[] = [];
  let at = first + 1;
  for (;;) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) bad('no empty line before the checkpoint');
    const line = text.slice(at, nl);
    at = nl + 1;
    if (line === '') break;
    const hash = decodeStdBase64(line);
    if (hash === null || hash.length !== 32) bad('a consistency proof line is not base64 of 32 bytes');
    proof.push(hash!);
    if (proof.length > MAX_PROOF_LINES) bad('more than 63 consistency proof lines');
  }
  return { oldSize, proof, note: text.slice(at) };
}
