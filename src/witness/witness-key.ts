import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type CosignerKey, cosignerKey } from '../core/cosignature.js';
import { type SigningKey, signingKeyFromSeed } from '../core/signing-key.js';

export interface WitnessIdentity {
  name: string;
  key: SigningKey;
  /** What logs and verifiers are given: `<name>+<key id>+<base64(0x04 ‖ key)>`. */
  verifier: CosignerKey;
}

/**
 * DIR/witness.key: a 32-byte Ed25519 seed in base64 (mode 0600), created on first start. The
 * default name is derived from the key, so it stays the same across restarts without a file.
 */
export function loadWitnessIdentity(dir: string, name?: string): WitnessIdentity {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'witness.key');
  if (!fs.existsSync(file)) {
    // 'wx': two witnesses started at once on one dir cannot both write a key.
    try {
      fs.writeFileSync(file, crypto.randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const text = fs.readFileSync(file, 'utf8').trim();
  const seed = Buffer.from(text, 'base64');
  if (seed.length !== 32 || seed.toString('base64') !== text) throw new Error(`${file} must hold exactly 32 bytes in standard base64`);
  const probe = signingKeyFromSeed(seed, 'witness');
  const witnessName = name ?? `gatehouse-witness/${probe.keyId}`;
  const key = signingKeyFromSeed(seed, witnessName);
  return { name: witnessName, key, verifier: cosignerKey(witnessName, key.publicKey) };
}
