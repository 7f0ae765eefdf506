// claim-path.ts in a child process: tsc's JavaScript of a tree (compiled.ts), with the service's
// Node flags, as `npm run bench` and claim-path-ab.ts run it.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClaimPathResult } from './claim-path.js';
import { compiledScript } from './compiled.js';
import { SERVER_NODE_ARGS } from './http-claims.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What `tree`'s claim-path prints (its last line of output) when run with `args`. */
export function claimPathInChild(args: readonly string[], tree: string = ROOT): ClaimPathResult {
  const out = execFileSync(process.execPath, [...SERVER_NODE_ARGS, compiledScript('bench/claim-path.ts', tree), ...args], { cwd: tree, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').at(-1)!) as ClaimPathResult;
}
