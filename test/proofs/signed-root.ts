import crypto from 'node:crypto';

/**
 * The size and root a checkpoint note signs, after checking the log's Ed25519 signature line
 * with node:crypto straight from the C2SP signed-note text (not with the product's verifier).
 */
export function signedRoot(note: string, verifierKey: string): { origin: string; size: number; root: Buffer } {
  const parts = verifierKey.split('+');
  const name = parts[0]!;
  const keyBytes = Buffer.from(parts.slice(2).join('+'), 'base64');
  if (keyBytes.length !== 33 || keyBytes[0] !== 0x01) throw new Error('not an Ed25519 verifier key');
  const publicKey = keyBytes.subarray(1);
  const keyId = crypto.createHash('sha256').update(`${name}\n`).update(Buffer.from([0x01])).update(publicKey).digest().subarray(0, 4);
  const split = note.indexOf('\n\n');
  const body = note.slice(0, split + 1);
  const line = note.slice(split + 2).split('\n').find((l) => l.startsWith(`\u2014 ${name} `));
  if (!line) throw new Error('no signature line by the log key');
  const blob = Buffer.from(line.slice(`\u2014 ${name} `.length), 'base64');
  if (!blob.subarray(0, 4).equals(keyId)) throw new Error('key id mismatch');
  const spki = crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]), format: 'der', type: 'spki' });
  if (!crypto.verify(null, Buffer.from(body, 'utf8'), spki, blob.subarray(4))) throw new Error('log signature does not verify');
  const [origin, size, root] = body.slice(0, -1).split('\n');
  return { origin: origin!, size: Number(size), root: Buffer.from(root!, 'base64') };
}
