// A log for driving witnesses in tests: leaves, roots and consistency proofs computed here from
// RFC 9162's recursive definitions (MTH, SUBPROOF), and notes signed with node:crypto from the
// C2SP signed-note text, independently of the product's code.
import crypto from 'node:crypto';
import { BIN, ManagedProcess } from '../helpers/server-process.js';

const sha = (...parts: Uint8Array[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();

export function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** RFC 9162 §2.1.4.1 PROOF(m, D[n]). */
export function consistency(m: number, leaves: Buffer[]): Buffer[] {
  const sub = (m: number, d: Buffer[], b: boolean): Buffer[] => {
    if (m === d.length) return b ? [] : [mth(d)];
    let k = 1;
    while (k * 2 < d.length) k *= 2;
    return m <= k ? [...sub(m, d.slice(0, k), b), mth(d.slice(k))] : [...sub(m - k, d.slice(k), false), mth(d.slice(0, k))];
  };
  return m === 0 || m === leaves.length ? [] : sub(m, leaves, true);
}

export function leaves(n: number, salt = 'a'): Buffer[] {
  return Array.from({ length: n }, (_, i) => sha(Buffer.from([0]), sha(Buffer.from(`${salt}${i}`))));
}

export interface LogKey {
  name: string;
  vkey: string;
  sign(body: string): string;
}

export function logKey(name: string): LogKey {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const keyId = sha(Buffer.from(`${name}\n`), Buffer.from([0x01]), raw).subarray(0, 4);
  return {
    name,
    vkey: `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([0x01]), raw]).toString('base64')}`,
    sign: (body) => `${body}\n\u2014 ${name} ${Buffer.concat([keyId, crypto.sign(null, Buffer.from(body), privateKey)]).toString('base64')}\n`,
  };
}

export function checkpointNote(key: LogKey, origin: string, log: Buffer[]): string {
  return key.sign(`${origin}\n${log.length}\n${mth(log).toString('base64')}\n`);
}

export function addCheckpointBody(oldSize: number, proof: Buffer[], note: string): string {
  return `old ${oldSize}\n${proof.map((p) => p.toString('base64') + '\n').join('')}\n${note}`;
}

/** Checks a cosignature/v1 line against a witness verifier key, from the tlog-cosignature text. */
export function cosignatureVerifies(line: string, note: string, witnessVkey: string): { ok: boolean; timestamp: bigint } {
  const [name, idHex] = witnessVkey.split('+') as [string, string];
  const material = Buffer.from(witnessVkey.split('+').slice(2).join('+'), 'base64');
  if (material[0] !== 0x04 || material.length !== 33) throw new Error('not a cosignature/v1 verifier key');
  const raw = material.subarray(1);
  if (sha(Buffer.from(`${name}\n`), Buffer.from([0x04]), raw).subarray(0, 4).toString('hex') !== idHex) throw new Error('witness key id mismatch');
  const prefix = `\u2014 ${name} `;
  if (!line.startsWith(prefix)) return { ok: false, timestamp: 0n };
  const blob = Buffer.from(line.slice(prefix.length), 'base64');
  if (blob.length !== 76 || blob.subarray(0, 4).toString('hex') !== idHex) return { ok: false, timestamp: 0n };
  const timestamp = blob.readBigUInt64BE(4);
  const body = note.slice(0, note.lastIndexOf('\n\n') + 1);
  const spki = crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
  const ok = crypto.verify(null, Buffer.from(`cosignature/v1\ntime ${timestamp}\n${body}`), spki, blob.subarray(12));
  return { ok, timestamp };
}

export interface WitnessProcess {
  url: string;
  vkey: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startWitness(dataDir: string, logs: string[], port = 0): Promise<WitnessProcess> {
  const proc = new ManagedProcess('gatehouse witness', [BIN, 'witness', '--data-dir', dataDir, '--port', String(port), ...logs.flatMap((l) => ['--log', l])]);
  const [, url] = await proc.waitFor(/witness listening on (http:\/\/\S+)/);
  const vkey = proc.stdout.match(/witness key: (\S+)/)![1]!;
  return { url: url!, vkey, process: proc, stop: () => proc.stop() };
}

export async function post(url: string, body: string): Promise<{ status: number; type: string; text: string }> {
  const r = await fetch(`${url}/add-checkpoint`, { method: 'POST', body });
  return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() };
}
