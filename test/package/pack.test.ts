// The package as a user gets it: `npm pack`, the tarball installed into a fresh plain-JavaScript
// project, and from there, with no TypeScript loader anywhere, `gatehouse/client` imported and
// used against a running server, its types resolved by tsc, and the installed bin's --help,
// init, principals add, serve and verify run on a data dir; and inside the installed package,
// where there is nothing to build from, `npm start` and `npm run build` leave its dist/ whole,
// and `--version` is Gatehouse's own, not the host project's; and the markdown it ships points
// only at files it ships.
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { assertBuilt } from '../helpers/built.js';
import { ManagedProcess, ROOT, tempDir } from '../helpers/server-process.js';

const run = promisify(execFile);

/**
 * The environment of every child here: no NODE_OPTIONS (so no loader can slip in), and none of the
 * npm_* variables an enclosing `npm test` exports (they describe this repository, not the fresh
 * project), except where npm keeps its cache and which registry it asks.
 */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    const lower = name.toLowerCase();
    if (name === 'NODE_OPTIONS' || name === 'INIT_CWD') continue;
    if (lower.startsWith('npm_') && !['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig'].includes(lower)) continue;
    env[name] = value;
  }
  return { ...env, GATEHOUSE_LOG_LEVEL: 'silent', ...extra };
}

/**
 * better-sqlite3 compiles its native addon from source when no prebuilt binary can be downloaded
 * (about two minutes of CPU here). Its installer (prebuild-install) first looks for a local
 * prebuild: hand it the addon this repository already built, for the same version, Node ABI and
 * platform, so the install runs its real script without the compile. Null when there is none.
 */
async function localPrebuilds(dir: string): Promise<string | null> {
  const pkgDir = path.join(ROOT, 'node_modules', 'better-sqlite3');
  if (!existsSync(path.join(pkgDir, 'build', 'Release', 'better_sqlite3.node'))) return null;
  const { version } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  mkdirSync(dir, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['-czf', path.join(dir, name), '-C', pkgDir, 'build/Release/better_sqlite3.node']);
  return dir;
}

// What a user writes: plain ESM JavaScript, run by plain `node`.
const CONSUMER = `
import { createRequire } from 'node:module';
import { GatehouseClient, Executor, MemoryKeyStore, SqliteKeyStore } from 'gatehouse/client';

// better-sqlite3 as far as this process has loaded it: its JavaScript (the CommonJS module cache,
// which an ESM import of it fills too) and its native addon (the process report's shared objects).
const nativeSqlite = () => [
  ...Object.keys(createRequire(import.meta.url).cache).filter((f) => f.endsWith('/better-sqlite3/lib/index.js')),
  ...process.report.getReport().sharedObjects.filter((f) => f.endsWith('/better_sqlite3.node')),
];

const [baseUrl, apiKey, keyFile] = process.argv.slice(2);
const client = new GatehouseClient({ baseUrl, apiKey });
const executor = new Executor({ client, keyStore: new MemoryKeyStore(), pinnedKeys: await client.keys() });
const spec = { method: 'POST', route: '/v1/tickets', command: { title: 'Disk full on db-3' } };
let writes = 0;
const write = async () => {
  writes++;
  return { ok: true, response: { status: 201, body: { id: 'T-1' } }, provider_ref: 'T-1' };
};
const first = await executor.execute('task-1:create-ticket', spec, write);
const again = await executor.execute('task-1:create-ticket', spec, write);
const nativeBefore = nativeSqlite();
const store = new SqliteKeyStore(keyFile);
const key = await store.keyFor('task-2:create-ticket');
store.close();
console.log(JSON.stringify({
  resolved: import.meta.resolve('gatehouse/client'),
  first: { kind: first.kind, outcome: first.outcome, response: first.response },
  again: { kind: again.kind, response: again.response },
  writes,
  nativeBefore,
  nativeAfter: nativeSqlite(),
  key,
}));
`;

// The same calls, type-checked against the declarations the package ships.
const CONSUMER_TS = `
import { GatehouseClient, Executor, MemoryKeyStore, type ExecuteResult } from 'gatehouse/client';

const client = new GatehouseClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'gh_x' });
const executor = new Executor({ client, keyStore: new MemoryKeyStore() });
const result: ExecuteResult = await executor.execute('i', { method: 'POST', route: '/r', command: {} }, async () => ({
  ok: true,
  response: { status: 201 },
}));
const kind: 'created' | 'replayed' | 'reused' | 'in_progress' | 'approval_required' | 'denied' | 'conflict' | 'unknown' = result.kind;
// @ts-expect-error the declarations are real types, not any
const wrong: number = result.kind;
export { kind, wrong };
`;

interface Installed {
  dir: string;
  /** The files `npm pack` put in the tarball. */
  shipped: string[];
  /** The fresh project the tarball was installed into. */
  app: string;
}

let installation: Promise<Installed> | undefined;
const cleanups: Array<() => void> = [];
test.after.always(() => cleanups.forEach((cleanup) => cleanup()));

/** `npm pack`, and the tarball installed into a fresh project: once, for every test here. */
function installed(): Promise<Installed> {
  installation ??= (async () => {
    assertBuilt(); // npm test builds first; the pack below takes dist/ as it is
    const { dir, cleanup } = tempDir('gatehouse-pack-');
    cleanups.push(cleanup);
    // --ignore-scripts: `prepare` would rebuild dist/ under the test files running beside this one.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, env: cleanEnv(), maxBuffer: 16 << 20 });
    const [{ filename, files }] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const app = path.join(dir, 'app');
    mkdirSync(app);
    // A version of its own: the installed CLI must not take it for Gatehouse's.
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '9.8.7', private: true, type: 'module' }));
    const prebuilds = await localPrebuilds(path.join(dir, 'prebuilds'));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(dir, filename)], {
      cwd: app,
      env: cleanEnv(prebuilds ? { npm_config_better_sqlite3_local_prebuilds: prebuilds } : {}),
      maxBuffer: 16 << 20,
    });
    return { dir, shipped: files.map((f) => f.path), app };
  })();
  return installation;
}

test.serial('the packed package installs into a plain JavaScript project: client, types and CLI work from dist/', async (t) => {
  t.timeout(600_000); // npm pack + npm install of every dependency on a loaded machine
  const { shipped, app } = await installed();
  t.true(shipped.includes('dist/src/client/index.js') && shipped.includes('dist/src/client/index.d.ts'), 'the client is shipped as JS with declarations');
  t.true(shipped.includes('dist/cli/main.js') && shipped.includes('dist/schema/openapi.json'));
  t.deepEqual(shipped.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), [], 'no TypeScript sources are shipped');
  const manifest = JSON.parse(readFileSync(path.join(app, 'node_modules', 'gatehouse', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  t.false('tsx' in manifest.dependencies, 'tsx is a dev dependency only');
  t.false(existsSync(path.join(app, 'node_modules', 'tsx')), 'installing the package does not install tsx');

  // The installed bin (node_modules/.bin/gatehouse, run through its shebang).
  const bin = path.join(app, 'node_modules', '.bin', 'gatehouse');
  const gatehouse = (args: string[]) => run(bin, args, { cwd: app, env: cleanEnv() });
  const help = await gatehouse(['--help']);
  t.regex(help.stdout, /gatehouse verify/);

  const dataDir = path.join(app, 'data');
  const init = await gatehouse(['init', '--data-dir', dataDir]);
  t.regex(init.stdout, /admin key: gh_/);
  const added = await gatehouse(['principals', 'add', '--data-dir', dataDir, '--account', 'acme', '--role', 'gateway']);
  const gatewayKey = added.stdout.match(/key: (gh_[A-Za-z0-9_-]+)/)?.[1];
  t.truthy(gatewayKey, added.stdout);

  const server = new ManagedProcess('installed gatehouse serve', [bin, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0'], { cwd: app, env: cleanEnv() });
  t.teardown(() => server.stop());
  const [, url] = await server.waitFor(/gatehouse listening on (http:\/\/\S+)/, 60_000);

  writeFileSync(path.join(app, 'consumer.mjs'), CONSUMER);
  const consumer = await run(process.execPath, ['consumer.mjs', url!, gatewayKey!, path.join(app, 'state', 'keys.db')], { cwd: app, env: cleanEnv() });
  const out = JSON.parse(consumer.stdout) as {
    resolved: string; first: { kind: string; outcome: string; response: unknown }; again: { kind: string; response: unknown };
    writes: number; nativeBefore: string[]; nativeAfter: string[]; key: string;
  };
  t.true(out.resolved.endsWith('/node_modules/gatehouse/dist/src/client/index.js'), out.resolved);
  t.deepEqual(out.first, { kind: 'created', outcome: 'succeeded', response: { status: 201, body: { id: 'T-1' } } });
  t.deepEqual(out.again, { kind: 'replayed', response: { status: 201, body: { id: 'T-1' } } });
  t.is(out.writes, 1, 'the retry was answered from the ledger, not written again');
  t.deepEqual(out.nativeBefore, [], 'importing and using gatehouse/client loads no native module');
  t.is(out.nativeAfter.length, 2, 'the SQLite key store loads better-sqlite3 and its addon when it is made');
  t.regex(out.key, /^ik_/);

  // The declarations resolve through exports' `types` condition for a NodeNext TypeScript user
  // who has @types/node installed, as a Node project does, but does not list it in `types`
  // (TypeScript 7's default is none): the declarations ask for it themselves.
  writeFileSync(path.join(app, 'consumer.ts'), CONSUMER_TS);
  mkdirSync(path.join(app, 'node_modules', '@types'), { recursive: true });
  for (const types of ['@types/node', 'undici-types']) symlinkSync(path.join(ROOT, 'node_modules', types), path.join(app, 'node_modules', types));
  writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true },
    files: ['consumer.ts'],
  }));
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const typecheck = await run(process.execPath, [tsc, '-p', app], { cwd: app, env: cleanEnv() }).catch((e: { stdout: string; code: number }) => e);
  t.is(typecheck.stdout, '', 'a TypeScript user of gatehouse/client typechecks against the shipped declarations');

  await server.stop();
  const verified = await gatehouse(['verify', '--db', path.join(dataDir, 'gatehouse.db')]);
  t.regex(verified.stdout, /account acme: intact \(\d+ events/);
});

/**
 * What a shipped markdown file points at inside the package: its relative links (anchor dropped),
 * resolved from the file's folder, and the `schema/...` paths it names in backticks, which are
 * the repository root's. Code is left out of the links: `](` there is not a link.
 */
function pointers(file: string, text: string): Array<{ named: string; target: string }> {
  const prose = text.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[^\n]*$/gm, '');
  const links = [...prose.replace(/`[^`\n]*`/g, '').matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^(#|[a-z][a-z0-9+.-]*:)/i.test(href))
    .map((href) => ({ named: href, target: path.posix.join(path.posix.dirname(file), decodeURIComponent(href.replace(/#.*$/, ''))) }));
  const schemas = [...prose.matchAll(/`(schema\/[^`\s]*)`/g)]
    .map((m) => m[1]!)
    // The package ships builds, not sources (checked above): a TypeScript source a doc names,
    // as ARCHITECTURE.md does, is there as its build under dist/, which must exist.
    .map((named) => ({ named, target: named.endsWith('.ts') ? `dist/${named.replace(/\.ts$/, '.js')}` : named }));
  return [...links, ...schemas];
}

// A user reads the docs in node_modules/gatehouse/: a link or a schema/ path that names a file
// the package does not carry is a dead end there, however well it resolves in the repository.
test.serial('every relative link and schema/ path in the shipped markdown resolves inside the installed package', async (t) => {
  t.timeout(600_000);
  const { shipped, app } = await installed();
  const pkg = path.join(app, 'node_modules', 'gatehouse');
  const docs = shipped.filter((f) => f.endsWith('.md'));
  t.true(docs.includes('README.md') && docs.includes('docs/README.md'), docs.join(', '));
  const found = docs.flatMap((file) => pointers(file, readFileSync(path.join(pkg, file), 'utf8')).map((p) => ({ file, ...p })));
  // Not vacuous: the README's links to the reference, the design and the numbers, and the
  // OpenAPI document and request schemas the HTTP reference names, are all among them.
  for (const target of ['docs/http-api.md', 'ARCHITECTURE.md', 'BENCHMARKS.md', 'schema/openapi.json', 'schema/requests/claim-operation.json']) {
    t.true(found.some((p) => p.target === target), `no shipped doc points at ${target}`);
  }
  const dead = found
    .filter(({ target }) => target.startsWith('../') || !existsSync(path.join(pkg, target)))
    .map(({ file, named }) => `${file}: ${named}`);
  t.deepEqual(dead, [], 'every relative link and schema/ path in the shipped docs names a file in the package');
});

/** Every file under `dir`, relative to it, with its size: what a rebuild or a deletion would change. */
function listing(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath, e.name);
      return `${path.relative(dir, file)} ${statSync(file).size}`;
    })
    .sort();
}

// Serial, after the test above: before the fix npm start deleted the dist/ that one runs.
test.serial('in the installed package, npm start runs the shipped dist/ and npm run build refuses, dist/ left whole; --version is Gatehouse\'s own', async (t) => {
  t.timeout(600_000);
  const { dir, app } = await installed();
  const pkg = path.join(app, 'node_modules', 'gatehouse');
  const dist = listing(path.join(pkg, 'dist'));
  t.true(dist.some((f) => f.startsWith('cli/main.js ')));

  // From the host project's directory, whose package.json has a version of its own.
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const shown = await run(path.join(app, 'node_modules', '.bin', 'gatehouse'), ['--version'], { cwd: app, env: cleanEnv() });
  t.is(shown.stdout.trim(), version);

  // `npm start` where there is nothing to build from: the service runs from the shipped build.
  // Its own process group, so npm, its shell and the server all get the signal.
  const start = spawn('npm', ['start', '--', '--host', '127.0.0.1', '--port', '0', '--data-dir', path.join(dir, 'start-data')], {
    cwd: pkg, env: cleanEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-start.pid!, signal);
    } catch {
      // already gone
    }
  };
  t.teardown(() => signalGroup('SIGKILL'));
  let out = '';
  start.stdout.on('data', (d: Buffer) => (out += d.toString()));
  start.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise<number | null>((resolve) => start.on('close', (code) => resolve(code)));
  const url = await Promise.race([
    new Promise<string>((resolve) => start.stdout.on('data', () => {
      const m = out.match(/gatehouse listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]!);
    })),
    ended.then(() => null),
  ]);
  t.truthy(url, `npm start did not start the service:\n${out}`);
  if (url) t.is((await fetch(`${url}/v1/healthz`)).status, 200);
  signalGroup('SIGTERM');
  await ended;
  t.deepEqual(listing(path.join(pkg, 'dist')), dist, 'npm start left dist/ as shipped');

  // `npm run build` there refuses, saying why, and deletes nothing.
  const build = await run('npm', ['run', 'build'], { cwd: pkg, env: cleanEnv() }).then(() => null, (e: { code: number; stderr: string }) => e);
  t.truthy(build, 'npm run build fails where there are no sources');
  t.regex(build?.stderr ?? '', /nothing to build here: no src\//);
  t.deepEqual(listing(path.join(pkg, 'dist')), dist, 'npm run build left dist/ as shipped');
});
