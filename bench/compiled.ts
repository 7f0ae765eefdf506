// The benches measure JavaScript as tsc writes it, as `npm start` runs it (dist/), not as tsx
// runs the TypeScript sources. tsx has esbuild keep function names (`keepNames`, not an option
// tsx lets one turn off): every closure a function creates is passed to `__name(fn, "name")`, an
// Object.defineProperty on the closure's `name` that also turns the closure into a dictionary-mode
// object. Each costs ~3,900 instructions (callgrind); a claim made through the product creates
// five, the lean claim one, so under tsx the product paid ~15,500 instructions per claim
// more than its floor for something `npm start` never runs (BENCHMARKS.md, thirty-third session).
//
// compiledScript() compiles a tree's src, cli, schema, test and bench with its own tsc (its
// tsconfig.json, emitting) into a directory of its own under <tree>/node_modules/.cache/
// gatehouse-bench, once per process and tree, removed when the process exits (two benches
// running at once must not rewrite each other's scripts), and answers one script's JavaScript.
// Packages resolve from <tree>/node_modules as they would from the sources. A ceiling server and
// the product are then measured alike.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join('node_modules', '.cache', 'gatehouse-bench');
/** Each tree compiled by this process, and where. */
const compiledTrees = new Map<string, string>();
process.on('exit', () => {
  for (const out of compiledTrees.values()) fs.rmSync(out, { recursive: true, force: true });
});

/** The compiled JavaScript of `script` (a .ts path relative to `tree`, e.g. `bench/lean-claim.ts`). */
export function compiledScript(script: string, tree: string = ROOT): string {
  const root = path.resolve(tree);
  let out = compiledTrees.get(root);
  if (out === undefined) {
    fs.mkdirSync(path.join(root, OUT), { recursive: true });
    out = fs.mkdtempSync(path.join(root, OUT, 'build-'));
    compiledTrees.set(root, out);
    const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
    try {
      execFileSync(tsc, ['-p', path.join(root, 'tsconfig.json'), '--noEmit', 'false', '--outDir', out, '--rootDir', root], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      // A type error still emits (no noEmitOnError); only a missing script is fatal, below.
      const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
      process.stderr.write(`bench: tsc reported errors compiling ${root} (the scripts were still written):\n${stdout ?? ''}${stderr ?? ''}`);
    }
  }
  const js = path.join(out, script.replace(/\.ts$/, '.js'));
  if (!fs.existsSync(js)) throw new Error(`bench: tsc wrote no ${path.relative(root, js)} for ${script}`);
  return js;
}
