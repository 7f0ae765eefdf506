/**
 * How verify opens a SQLite file: this thread and every slice worker open the same path the
 * same way (openLedgerDb), read-only.
 *
 * SQLite reads a WAL-mode file (header byte 19 is 2) only with its -wal and -shm files beside
 * it, and makes them when they are missing; where it cannot (a read-only mount, a directory the
 * user may not write) it cannot read the file at all: SQLITE_CANTOPEN. Its `immutable=1` URI
 * parameter would read such a file in place, but the SQLite that better-sqlite3 bundles is built
 * with SQLITE_USE_URI=0 and takes a `file:` name for a plain path, and opening with exclusive
 * locking (no -shm) still needs a -wal.
 *
 * So a WAL-mode file with no -wal beside it, on storage where none can be made, is read from a
 * copy in a private temporary directory. Without a -wal the file is at rest and complete: SQLite
 * removes the -wal at the last clean close, and `sqlite3 .backup` writes none. A file with a
 * -wal beside it is never copied: a writer may have it open (a copy could be torn) and the -wal
 * may hold transactions the file does not; it is read in place, through SQLite's own
 * coordination, as a live database must be.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { VerifyInputError } from './errors.js';

/** The one way verify opens a ledger file, on every thread. */
export function openLedgerDb(file: string): BetterSqlite3.Database {
  return new BetterSqlite3(file, { readonly: true, fileMustExist: true });
}

/** The path to open for `--db FILE`, and what to do when verify is done with it. */
export interface LedgerFile {
  path: string;
  /** Null when the file itself is opened; else the copy, made in `dir`. */
  copy: { dir: string } | null;
  release(): void;
}

/**
 * The file to read from a copy, or null when SQLite reads `file` in place: a WAL-mode file, no
 * -wal beside it, and a directory where SQLite cannot make one. SQLite puts the -wal beside the
 * file a symbolic link names, so this is the link's target.
 */
export function restingWalFileOnReadOnlyStorage(file: string): string | null {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    return null; // opening it will say why
  }
  if (!isWalMode(real) || fs.existsSync(`${real}-wal`)) return null;
  try {
    fs.accessSync(path.dirname(real), fs.constants.W_OK);
    return null;
  } catch {
    return real; // EROFS on a read-only mount (for root too), EACCES in a directory one may not write
  }
}

/** `file` itself, or a private copy of it (restingWalFileOnReadOnlyStorage), removed by release(). */
export function ledgerFileToOpen(file: string): LedgerFile {
  const real = restingWalFileOnReadOnlyStorage(file);
  if (real === null) return { path: file, copy: null, release: () => {} };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-verify-'));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  // A verify that ends on an error still removes it; a kill (SIGKILL, SIGINT) can leave it behind.
  process.once('exit', remove);
  const release = () => {
    process.removeListener('exit', remove);
    remove();
  };
  try {
    const copy = path.join(dir, path.basename(real));
    const before = fs.statSync(real, { bigint: true });
    fs.copyFileSync(real, copy);
    const after = fs.statSync(real, { bigint: true });
    // A writer that opened the file meanwhile and checkpointed into it changed what was being copied.
    if (after.size !== before.size || after.mtimeNs !== before.mtimeNs || after.ctimeNs !== before.ctimeNs) {
      throw new VerifyInputError(`${file} changed while it was being copied for reading (a writer has it open): verify it where SQLite can make its -wal and -shm files beside it`);
    }
    return { path: copy, copy: { dir }, release };
  } catch (error) {
    release();
    if (error instanceof VerifyInputError) throw error;
    throw new VerifyInputError(`cannot copy ${file} to ${dir} to read it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** A SQLite file whose header says WAL mode (file format read version 2, byte 19). */
function isWalMode(file: string): boolean {
  const header = Buffer.alloc(20);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return false; // opening it will say why
  }
  try {
    return fs.readSync(fd, header, 0, 20, 0) === 20 && header.toString('latin1', 0, 16) === 'SQLite format 3\0' && header[19] === 2;
  } finally {
    fs.closeSync(fd);
  }
}
