import fs from 'node:fs';
import { UsageError } from './output.js';

/**
 * `--out FILE` of the verbs that write a file (export, prove): a new file, never one that
 * exists. An export or an evidence file may be the only copy of what it holds, so an existing
 * one is a refused action (exit 2), not something to replace. Opened exclusively ('wx'), so a
 * file that appears between a check and the write is not overwritten either.
 */
export function openNewOutFile(file: string): number {
  try {
    return fs.openSync(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new UsageError(`--out ${file} exists already; it is never overwritten (remove it or name another file)`);
    }
    throw error;
  }
}

/** The whole of a new `--out` file at once (prove's evidence file). */
export function writeNewOutFile(file: string, text: string): void {
  const fd = openNewOutFile(file);
  try {
    fs.writeFileSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}
