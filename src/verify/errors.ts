/**
 * Input that `gatehouse verify` (or `verify-evidence`) cannot read at all (a missing file, a
 * file that is not a Gatehouse database, export or evidence file, a bad key option): exit 2,
 * one clear line, never a stack.
 * Evidence of tampering is not an error: it is a verdict (exit 1).
 */
export class VerifyInputError extends Error {
  override name = 'VerifyInputError';
}

export const EXIT_INTACT = 0;
export const EXIT_TAMPERED = 1;
export const EXIT_UNREADABLE = 2;

/** The errno or SQLite code of an I/O failure, else null. */
export function ioErrorCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(E[A-Z]+|SQLITE_\w+|\d{2}[0-9A-Z]{3})$/.test(code) ? code : null;
}
