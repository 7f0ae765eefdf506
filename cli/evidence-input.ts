/**
 * The files `gatehouse verify-evidence` reads, each read strictly from its bytes
 * (docs/formats.md, Canonical JSON), so that two texts are never taken for one value: the
 * evidence file and `--keys FILE`. Loaded by that verb only.
 */
import fs from 'node:fs';
import { NotEvidenceError, parseEvidenceFile } from '../src/core/evidence.js';
import { JsonInputError, parseStrictJson } from '../src/core/strict-json.js';
import { VerifyInputError } from '../src/verify/errors.js';

/** The evidence file (see parseEvidenceFile); a file that is none is the wrong input (exit 2). */
export function readEvidenceFile(file: string): { evidence: unknown; altered: string | null } {
  try {
    return parseEvidenceFile(readBytes(file, 'the evidence file'));
  } catch (error) {
    if (error instanceof NotEvidenceError) throw new VerifyInputError(`${file}: ${error.message}`);
    throw error;
  }
}

/** `--keys FILE`, the keys the user trusts: their own input, so any fault in it is exit 2. */
export function readKeysFile(file: string): unknown {
  try {
    return parseStrictJson(readBytes(file, '--keys'));
  } catch (error) {
    if (error instanceof JsonInputError) throw new VerifyInputError(`--keys ${file} is not strict JSON: ${error.message}`);
    throw error;
  }
}

function readBytes(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new VerifyInputError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}
