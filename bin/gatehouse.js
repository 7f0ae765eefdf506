#!/usr/bin/env node
// The CLI runs the JavaScript built into dist/ (`npm run build`, which `npm install` and
// `npm pack` run through `prepare`); nothing here compiles TypeScript at run time.
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('gatehouse: dist/ is not built: run `npm run build` (npm install does it) and try again.\n');
  process.exit(2);
}
await import(main.href);
