import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

export const MASTER_KEY_FILE = 'master.key';
export const SIGNING_KEY_FILE = 'signing.key';

export class KeyFileError extends Error {}

/** 32 random bytes each: the master key wraps the accounts' data keys, the signing seed makes the Ed25519 key. */
export interface KeyMaterial {
  masterKey: Uint8Array;
  signingSeed: Uint8Array;
}

export function keyFilesExist(dataDir: string): boolean {
  return [MASTER_KEY_FILE, SIGNING_KEY_FILE].some((name) => fs.existsSync(path.join(dataDir, name)));
}

/** Writes new key files with mode 0600; refuses to overwrite (a lost master key loses every payload). */
export function createKeyFiles(dataDir: string): void {
  if (keyFilesExist(dataDir)) throw new KeyFileError(`key files already exist in ${dataDir}; refusing to overwrite them`);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  for (const name of [MASTER_KEY_FILE, SIGNING_KEY_FILE]) {
    fs.writeFileSync(path.join(dataDir, name), crypto.randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  }
}

/** Where the keys come from: the environment's base64 values win over the data dir's files (a Config fits). */
export interface KeySources {
  dataDir: string;
  masterKeyBase64: string | null;
  signingKeyBase64: string | null;
}

export function loadKeyMaterial(config: KeySources): KeyMaterial {
  return {
    masterKey: config.masterKeyBase64
      ? decodeKey(config.masterKeyBase64, 'GATEHOUSE_MASTER_KEY')
      : readKeyFile(path.join(config.dataDir, MASTER_KEY_FILE)),
    signingSeed: config.signingKeyBase64
      ? decodeKey(config.signingKeyBase64, 'GATEHOUSE_SIGNING_KEY')
      : readKeyFile(path.join(config.dataDir, SIGNING_KEY_FILE)),
  };
}

export function readKeyFile(file: string): Uint8Array {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new KeyFileError(`cannot read key file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}. Run \`gatehouse init\` first, or pass --data-dir`);
  }
  return decodeKey(text.trim(), file);
}

function decodeKey(base64: string, source: string): Uint8Array {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length !== 32 || bytes.toString('base64') !== base64) {
    throw new KeyFileError(`${source} must hold exactly 32 bytes in standard base64`);
  }
  return new Uint8Array(bytes);
}
