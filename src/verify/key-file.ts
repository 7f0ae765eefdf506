import fs from 'node:fs';
import { VerifyInputError } from './errors.js';

/**
 * A data dir key file (`master.key`, `signing.key`): 32 bytes in standard base64 on one line.
 * Read here rather than through src/config so that verify stays an offline tool on src/core.
 */
export function readKeyFile(file: string, what: string): Uint8Array {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new VerifyInputError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const base64 = text.trim();
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length !== 32 || bytes.toString('base64') !== base64) {
    throw new VerifyInputError(`${what} ${file} must hold exactly 32 bytes in standard base64`);
  }
  return new Uint8Array(bytes);
}
