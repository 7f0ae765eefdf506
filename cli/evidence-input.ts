/**
 * The evidence file `gatehouse verify-evidence` reads, read strictly from its bytes
 * (docs/formats.md, Canonical JSON), so that two texts are never taken for one value. (Its
 * `--keys FILE` is read by verify's own reader, src/verify/trust.ts.) Loaded by that verb only.
 */
import fs from 'node:fs';
import { NotEvidenceError, parseEvidenceFile } from '../src/core/evidence.js';
import { VerifyInputError } from '../src/verify/errors.js';

/** The evidence file (see parseEvidenceFile); a file that is none is the wrong input (exit 2). */
export function readEvidenceFile(file: string): { evidence: unknown; altered: string | null } {
  try {
    return parseEvidenceFile(readBytes(file));
  } catch (error) {
    if (error instanceof NotEvidenceError) throw new VerifyInputError(`${file}: ${error.message}`);
    throw error;
  }
}

function readBytes(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new VerifyInputError(`cannot read the evidence file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}
