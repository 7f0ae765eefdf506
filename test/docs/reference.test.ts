// The reference in docs/ against the code: every route the app serves, every CLI verb and every
// error code must be documented, each where a reader looks for it, and nothing in the repository
// may point at a file outside it (a clone does not have one).
import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type Router from '@koa/router';
import { DomainError, type ErrorCode } from '../../src/core/errors.js';
import { ERROR_STATUS, INTERNAL_ERROR, httpErrorOf } from '../../src/http/error-status.js';
import { routeModules } from '../../src/http/server.js';
import { startTestApp } from '../helpers/app.js';
import { ROOT, runCli } from '../helpers/server-process.js';

const readDoc = (name: string): string => fs.readFileSync(path.join(ROOT, 'docs', name), 'utf8');

/** `### \`POST /v1/operations/{id}/events\`` headings: "METHOD PATH" in OpenAPI's `{param}` spelling. */
export function documentedRoutes(markdown: string): Set<string> {
  const found = new Set<string>();
  for (const match of markdown.matchAll(/^#{2,4} `(GET|POST|PUT|PATCH|DELETE) (\/[^`\s]*)`\s*$/gm)) found.add(`${match[1]} ${match[2]}`);
  return found;
}

/** `### \`gatehouse principals add\`` headings: the verb path after `gatehouse`. */
export function documentedVerbs(markdown: string): Set<string> {
  const found = new Set<string>();
  for (const match of markdown.matchAll(/^#{2,4} `gatehouse ([a-z][a-z-]*(?: [a-z][a-z-]*)*)`\s*$/gm)) found.add(match[1]!);
  return found;
}

/** Rows `| \`code\` | status | … |` of the "Error codes" section: "code status". */
export function documentedErrors(markdown: string): Set<string> {
  const section = markdown.split(/^## Error codes\s*$/m)[1]?.split(/^## /m)[0] ?? '';
  const found = new Set<string>();
  for (const match of section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)) found.add(`${match[1]} ${match[2]}`);
  return found;
}

/** Koa-router's `:id` is the docs' (and OpenAPI's) `{id}`. */
function docPath(routerPath: string): string {
  return routerPath.replace(/:([A-Za-z_]+)/g, '{$1}');
}

/** What a client sees for each code of the table, as "code status"; the 500 is outside the table. */
function servedErrors(): Set<string> {
  const served = new Set<string>([`${INTERNAL_ERROR.code} ${INTERNAL_ERROR.status}`]);
  for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
    const wire = httpErrorOf(new DomainError(code, 'probe'));
    served.add(`${wire.code} ${wire.status}`);
  }
  return served;
}

/** Verb paths from `--help` listings: lines `  gatehouse <verb> [sub] [<arg>|[opt]]  description`. */
function listedVerbs(help: string, parent: string[]): string[] {
  const verbs: string[] = [];
  const prefix = ['gatehouse', ...parent].join(' ') + ' ';
  for (const line of help.split('\n')) {
    if (!line.startsWith(`  ${prefix}`)) continue;
    const word = line.slice(2 + prefix.length).split(/\s+/)[0]!;
    if (/^[a-z][a-z-]*$/.test(word)) verbs.push([...parent, word].join(' '));
  }
  return verbs;
}

test('every route the app serves has a heading in docs/http-api.md, and every heading names a served route', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const served = new Set<string>();
  for (const module of routeModules(app.context)) {
    for (const layer of (module.router as Router).stack) {
      // Middleware layers (router.use) have no methods; HEAD comes free with GET.
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) served.add(`${method} ${docPath(String(layer.path))}`);
    }
  }
  const documented = documentedRoutes(readDoc('http-api.md'));
  t.true(served.size >= 20, `walked ${served.size} routes`);
  t.deepEqual([...served].filter((r) => !documented.has(r)), [], 'served but not documented (add a "### `METHOD /path`" heading)');
  t.deepEqual([...documented].filter((r) => !served.has(r)), [], 'documented but not served');
});

test('every CLI verb has a heading in docs/cli.md, and every heading names a verb', async (t) => {
  const top = await runCli(['--help']);
  t.is(top.code, 0, top.stderr);
  const verbs: string[] = [];
  // A verb with subcommands (principals, accounts) is documented per subcommand.
  await Promise.all(listedVerbs(top.stdout, []).map(async (verb) => {
    const help = await runCli([verb, '--help']);
    t.is(help.code, 0, `${verb} --help: ${help.stderr}`);
    const subs = listedVerbs(help.stdout, [verb]);
    verbs.push(...(subs.length > 0 ? subs : [verb]));
  }));
  const documented = documentedVerbs(readDoc('cli.md'));
  t.true(verbs.length >= 9, `found ${verbs.length} verbs: ${verbs.join(', ')}`);
  t.deepEqual(verbs.filter((v) => !documented.has(v)).sort(), [], 'registered but not documented (add a "### `gatehouse VERB`" heading)');
  t.deepEqual([...documented].filter((v) => !verbs.includes(v)).sort(), [], 'documented but not registered');
});

test('every error code has a row with its status in docs/http-api.md, and every row is a code the service answers', (t) => {
  const served = servedErrors();
  const documented = documentedErrors(readDoc('http-api.md'));
  t.true(served.size >= 20, `${served.size} codes`);
  t.deepEqual([...served].filter((e) => !documented.has(e)), [], 'answered but not in the Error codes table (add "| `code` | status | when |")');
  t.deepEqual([...documented].filter((e) => !served.has(e)), [], 'in the Error codes table but not answered with that status');
});

test('the checks catch a missing entry: one heading or row removed is reported', (t) => {
  const api = readDoc('http-api.md');
  const cli = readDoc('cli.md');
  const withoutClaim = api.replace(/^### `POST \/v1\/operations`\s*$/m, '### The claim');
  t.true(documentedRoutes(api).has('POST /v1/operations'));
  t.false(documentedRoutes(withoutClaim).has('POST /v1/operations'));
  t.false(documentedRoutes('The claim is `POST /v1/operations`.').has('POST /v1/operations'), 'a mention in prose is not a heading');
  const withoutRevoke = cli.replace(/^### `gatehouse principals revoke`\s*$/m, '');
  t.true(documentedVerbs(cli).has('principals revoke'));
  t.false(documentedVerbs(withoutRevoke).has('principals revoke'));
  const withoutLeaseLost = api.replace(/^\| `lease_lost` \| 409 \|.*$/m, '');
  t.true(documentedErrors(api).has('lease_lost 409'));
  t.false(documentedErrors(withoutLeaseLost).has('lease_lost 409'));
  t.false(documentedErrors(api.replace('| `lease_lost` | 409 |', '| `lease_lost` | 400 |')).has('lease_lost 409'), 'the status must match too');
});

/** What a file must not say: a path or a section of a document that a clone does not have. */
const OUTSIDE_REFERENCES: RegExp[] = [
  new RegExp(['\\.\\.', 'shared'].join('/')),
  new RegExp(['shared', 'CONTRACT'].join('/'), 'i'),
  new RegExp(['CONTRACT', 'md'].join('\\.')),
  new RegExp('contract \u00a7\\s*\\d', 'i'),
];

test('no tracked file points outside the repository', async (t) => {
  const { stdout } = await promisify(execFile)('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  const files = stdout.split('\0').filter((f) => f !== '' && !f.startsWith('node_modules/'));
  t.true(files.length > 100, `${files.length} tracked files`);
  const offenders: string[] = [];
  for (const file of files) {
    const full = path.join(ROOT, file);
    if (!fs.existsSync(full) || !fs.statSync(full).isFile()) continue;
    const text = fs.readFileSync(full, 'utf8');
    text.split('\n').forEach((line, i) => {
      if (OUTSIDE_REFERENCES.some((re) => re.test(line))) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  t.deepEqual(offenders, [], 'point at docs/ (for example docs/formats.md#events) instead');
  t.true(OUTSIDE_REFERENCES.some((re) => re.test(`see ${['..', 'shared', 'CONTRACT'].join('/')}.md`)), 'the patterns match what they are meant to');
});
