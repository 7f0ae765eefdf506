// A directory on storage that refuses writes, as a read-only mount refuses them, for what verify
// does there. A user other than root gets a directory of mode 0555. Root writes through any
// mode (chmod stops nothing), so for root it is a read-only bind mount of a directory, which
// needs CAP_SYS_ADMIN; without it these tests are skipped loudly (in CI too: the right to mount
// is the machine's, not something the product or its CI script can provide).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';

const isRoot = process.getuid?.() === 0;

/** Whether readOnlyDir can make one here; says loudly when not. */
export function readOnlyDirsAvailable(): boolean {
  if (!isRoot) return true;
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ro-probe-'));
  try {
    execFileSync('mount', ['--bind', probe, probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    const message = 'running as root without the right to mount: the read-only storage tests are SKIPPED (root writes through a mode 0555 directory)';
    process.stderr.write(`\n!!!!! ${message} !!!!!\n\n`);
    return false;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

/**
 * A directory holding what `fill` wrote, in which nothing can then be created, not even by
 * root; undone after the test. Checked: a test of read-only storage must not pass on writable.
 */
export function readOnlyDir(t: Pick<ExecutionContext, 'teardown'>, fill: (dir: string) => void): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ro-'));
  const source = path.join(base, 'source');
  const view = isRoot ? path.join(base, 'view') : source;
  fs.mkdirSync(source);
  fill(source);
  if (isRoot) {
    fs.mkdirSync(view);
    execFileSync('mount', ['--bind', source, view]);
    execFileSync('mount', ['-o', 'remount,ro,bind', view]);
  } else {
    for (const dir of directoriesIn(view)) fs.chmodSync(dir, 0o555);
  }
  t.teardown(() => {
    if (isRoot) execFileSync('umount', [view]);
    else for (const dir of directoriesIn(view)) fs.chmodSync(dir, 0o755);
    fs.rmSync(base, { recursive: true, force: true });
  });
  try {
    fs.writeFileSync(path.join(view, 'probe'), '');
  } catch {
    return view;
  }
  throw new Error(`${view} takes new files: it is not read-only storage`);
}

function directoriesIn(dir: string): string[] {
  const below = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((e) => directoriesIn(path.join(dir, e.name)));
  return [dir, ...below];
}
