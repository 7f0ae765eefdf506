// Tests that spawn `bin/gatehouse.js` run the JavaScript built into dist/, not the sources:
// `npm test` builds first, and a test run straight through `npx ava` after an edit must not
// pass against yesterday's build. assertBuilt() fails, naming the file, when a source under
// src/, cli/ or schema/ is newer than its output in dist/ or has none.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE_DIRS = ['src', 'cli', 'schema'];

/** dist/ path of a source: `.ts` compiles to `.js`, a `.json` schema is copied when imported. */
function outputOf(relative: string): string {
  return path.join(ROOT, 'dist', relative.replace(/\.ts$/, '.js'));
}

/** The first source whose build output is missing or older than it, or null when dist/ is fresh. */
export function staleSource(): string | null {
  for (const dir of SOURCE_DIRS) {
    for (const entry of readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      const json = entry.name.endsWith('.json');
      if (!entry.isFile() || !(json || entry.name.endsWith('.ts')) || entry.name.endsWith('.d.ts')) continue;
      const relative = path.relative(ROOT, path.join(entry.parentPath, entry.name));
      let built: number;
      try {
        built = statSync(outputOf(relative)).mtimeMs;
      } catch {
        if (json) continue; // a JSON file nothing imports is not copied
        return relative;
      }
      if (statSync(path.join(ROOT, relative)).mtimeMs > built) return relative;
    }
  }
  return null;
}

let checked = false;

/** Throws when dist/ is stale (checked once per test file: the tree does not change under a run). */
export function assertBuilt(): void {
  if (checked) return;
  const stale = staleSource();
  if (stale) throw new Error(`dist/ is older than ${stale}: run \`npm run build\` (npm test builds before it runs ava)`);
  checked = true;
}
