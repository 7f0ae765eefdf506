#!/usr/bin/env node
// `npm run build` (and `prepare`, so `npm install` and `npm pack` build too): compile src/, cli/
// and schema/ to dist/ as JavaScript with type declarations (tsconfig.build.json). dist/ is
// removed first, so a source that was moved or deleted leaves no stale module behind to be
// imported or packed.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');

rmSync(path.join(root, 'dist'), { recursive: true, force: true });
try {
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
} catch {
  process.exitCode = 1; // tsc printed the errors
}
