import { readFileSync } from 'node:fs';

/**
 * Gatehouse's own version: from the package.json nearest this module (dist/cli/ or cli/, then up
 * to the package root), not the one nearest the working directory — yargs' default, which in an
 * installed package is the host project's.
 */
export function ownVersion(): string {
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    try {
      return (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version: string }).version;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || new URL('../', dir).href === dir.href) throw error;
    }
  }
}
