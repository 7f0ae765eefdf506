/**
 * A policies file that cannot be used. Start-up stops with this message, so it
 * names the file, the line and column when it knows them, what is wrong and
 * what to do (a message that says where and why: docs/formats.md#policies-file).
 */
export class PolicyConfigError extends Error {
  readonly file: string;
  readonly line: number | null;
  readonly column: number | null;

  constructor(file: string, problem: string, position: { line: number; column: number } | null = null) {
    const where = position ? `${file}, line ${position.line}, column ${position.column}` : file;
    super(`policies file ${where}: ${problem}`);
    this.name = 'PolicyConfigError';
    this.file = file;
    this.line = position?.line ?? null;
    this.column = position?.column ?? null;
  }
}
