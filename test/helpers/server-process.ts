// Real processes for end-to-end tests: the gatehouse server, the CLI verbs, and the examples
// (ticket API, gateway, agent). Every process a test starts is killed when the test file ends.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertBuilt } from './built.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/gatehouse.js');

/** A port nobody listens on right now (bind port 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function tempDir(prefix = 'gatehouse-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const running = new Set<ManagedProcess>();
// A test worker that ends without its teardown must not leave servers behind holding ports and
// database connections: they die with it. ava ends a timed-out worker with SIGTERM, whose default
// action skips 'exit' handlers, so SIGTERM kills them too and is then raised again.
const killRunning = () => {
  for (const p of running) p.child.kill('SIGKILL');
};
process.once('exit', killRunning);
process.once('SIGTERM', () => {
  killRunning();
  process.kill(process.pid, 'SIGTERM');
});

export class ManagedProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly name: string;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #waiters: Array<() => void> = [];

  constructor(name: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}) {
    if (args[0] === BIN) assertBuilt(); // the bin runs dist/: never test a build older than the sources
    this.name = name;
    this.child = spawn(process.execPath, args, {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, GATEHOUSE_LOG_LEVEL: process.env.GATEHOUSE_LOG_LEVEL ?? 'silent', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdin.end(options.input ?? '');
    const wake = () => this.#waiters.splice(0).forEach((w) => w());
    this.child.stdout.on('data', (d: Buffer) => {
      this.stdout += d.toString();
      wake();
    });
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      wake();
    });
    this.exited = new Promise((resolve) => {
      // 'close', not 'exit': only then has all of the child's output been read.
      this.child.on('close', (code, signal) => {
        running.delete(this);
        wake();
        resolve({ code, signal });
      });
    });
    running.add(this);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the first match of `pattern` in stdout (from the start), or rejects on timeout or exit. */
  async waitFor(pattern: RegExp, timeoutMs = 20_000, stream: 'stdout' | 'stderr' = 'stdout'): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this[stream].match(pattern);
      if (m) return m;
      if (!this.alive) throw new Error(`${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before printing ${pattern}\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.name}: no ${pattern} within ${timeoutMs} ms\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** SIGKILL: no shutdown handler runs (a crash). */
  async kill9(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Kills every process started through this module that is still running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `gatehouse` binary to completion: the one CLI runner of the tests. */
export async function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {}): Promise<CliResult> {
  const p = new ManagedProcess(`gatehouse ${args[0] ?? ''}`, [BIN, ...args], options);
  const { code } = await p.exited;
  return { code, stdout: p.stdout, stderr: p.stderr };
}

export interface GatehouseServer {
  url: string;
  port: number;
  dataDir: string;
  dbPath: string;
  /** From the first start's `admin key: gh_…` line. */
  adminKey: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

async function waitHealthy(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/v1/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url}/v1/healthz not healthy within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `gatehouse serve` with a fresh (or given) data dir, on the port given, else on port 0: the
 * port it printed is the one to restart it on. A port picked free beforehand (freePort) can be
 * taken by any outgoing connection before the server binds it (EADDRINUSE, seen in CI).
 */
export async function startGatehouse(options: { dataDir?: string; config?: object | string; port?: number; adminKey?: string; env?: NodeJS.ProcessEnv } = {}): Promise<GatehouseServer> {
  const dataDir = options.dataDir ?? tempDir('gatehouse-data-').dir;
  const args = [BIN, 'serve', '--data-dir', dataDir, '--port', String(options.port ?? 0)];
  if (options.config !== undefined) {
    let file = options.config;
    if (typeof file !== 'string') {
      file = path.join(dataDir, '..', `${path.basename(dataDir)}-policies.json`);
      writeFileSync(file, JSON.stringify(options.config, null, 2));
    }
    args.push('--config', file);
  }
  const proc = new ManagedProcess('gatehouse serve', args, { env: options.env });
  const [, url] = await proc.waitFor(/gatehouse listening on (http:\/\/\S+)/);
  const port = Number(new URL(url!).port);
  const adminKey = options.adminKey ?? proc.stdout.match(/admin key: (gh_[A-Za-z0-9_-]+)/)?.[1];
  if (!adminKey) throw new Error(`gatehouse serve printed no admin key\nstdout: ${proc.stdout}`);
  await waitHealthy(url!);
  return { url: url!, port, dataDir, dbPath: path.join(dataDir, 'gatehouse.db'), adminKey, process: proc, stop: () => proc.stop() };
}

/** `gatehouse principals add`; answers the printed `key: gh_…`. */
export async function addPrincipal(dataDir: string, account: string, roles: string[]): Promise<string> {
  const r = await runCli(['principals', 'add', '--data-dir', dataDir, '--account', account, ...roles.flatMap((role) => ['--role', role])]);
  const key = r.stdout.match(/key: (gh_[A-Za-z0-9_-]+)/)?.[1];
  if (r.code !== 0 || !key) throw new Error(`principals add failed (${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return key;
}

/** `gatehouse verify --db FILE`. */
export function verifyDb(dbPath: string, extra: string[] = []): Promise<CliResult> {
  return runCli(['verify', '--db', dbPath, ...extra]);
}

/** `node --import=tsx examples/<script>.ts --port N …`, waiting for its `listening on` line. */
export async function startExample(script: string, args: string[], options: { port?: number; env?: NodeJS.ProcessEnv } = {}): Promise<{ url: string; port: number; process: ManagedProcess }> {
  const port = options.port ?? (await freePort());
  const proc = new ManagedProcess(script, ['--import=tsx', path.join(ROOT, 'examples', script), '--port', String(port), ...args], { env: options.env });
  await proc.waitFor(/listening on/);
  return { url: `http://127.0.0.1:${port}`, port, process: proc };
}

/** `node --import=tsx <script> …` run to completion (or managed by the caller). */
export function startScript(script: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): ManagedProcess {
  return new ManagedProcess(script, ['--import=tsx', path.join(ROOT, script), ...args], { env: options.env });
}

export interface SpawnedGatehouse {
  /** From the `gatehouse listening on http://…` line. */
  url: string;
  /** The `admin key: gh_…` line, printed only by the instance that created the first admin. */
  adminKey: string | null;
  process: ManagedProcess;
  stop(): Promise<void>;
  kill9(): Promise<void>;
}

/**
 * `gatehouse serve` with any store arguments (`--database-url …`, `--db …`) on port 0 by default,
 * so several instances can start at once without racing for a free port.
 */
export async function spawnGatehouse(options: { args: string[]; env?: NodeJS.ProcessEnv; host?: string; port?: number; name?: string; timeoutMs?: number }): Promise<SpawnedGatehouse> {
  const args = [BIN, 'serve', '--host', options.host ?? '127.0.0.1', '--port', String(options.port ?? 0), ...options.args];
  const proc = new ManagedProcess(options.name ?? 'gatehouse serve', args, { env: options.env });
  // 60 s: on the slowest CI host yet (durable Koa at a third of the last one's rate) a start with
  // PostgreSQL, beside parallel-sqlite's verify workers filling both cores, took over 30 s to
  // print its line; alone it takes ~2 s. The wait ends as soon as the line comes.
  const [, url] = await proc.waitFor(/gatehouse listening on (http:\/\/\S+)/, options.timeoutMs ?? 60_000);
  const adminKey = proc.stdout.match(/admin key: (gh_[A-Za-z0-9_-]+)/)?.[1] ?? null;
  return { url: url!, adminKey, process: proc, stop: () => proc.stop(), kill9: () => proc.kill9() };
}

/** Runs a `gatehouse` verb with explicit store arguments, e.g. `principals add … --database-url URL`. */
export async function addPrincipalWith(storeArgs: string[], account: string, roles: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await runCli(['principals', 'add', ...storeArgs, '--account', account, ...roles.flatMap((role) => ['--role', role])], { env });
  const key = r.stdout.match(/key: (gh_[A-Za-z0-9_-]+)/)?.[1];
  if (r.code !== 0 || !key) throw new Error(`principals add failed (${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return key;
}
