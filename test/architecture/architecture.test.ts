import test from 'ava';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSources, type Source } from './source-graph.js';
import { cycles, httpEdgeViolations, tableOwnerViolations } from './rules.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tree = readSources(ROOT, ['src', 'cli', 'schema']);

test('the scan sees the tree (a scan that found nothing would pass every rule)', (t) => {
  t.true(tree.length > 100);
  t.true(tree.some((s) => s.path === 'src/operations/transitions.ts'));
});

test('each table is written only by its owner: operations and scope_holds by the transitions module and its row helpers, the ledger tables by src/ledger, principals by src/principals, approvals by src/approvals', (t) => {
  t.deepEqual(tableOwnerViolations(tree), []);
});

test('no file outside src/http imports koa, @koa/router or src/http (the serve verb, which starts the edge, aside)', (t) => {
  t.deepEqual(httpEdgeViolations(tree), []);
});

test('no import cycle in src/ and cli/ (type-only imports included)', (t) => {
  t.deepEqual(cycles(tree), []);
});

// Each rule, shown failing on a tree with one made-up file added or changed.
const withFile = (file: Source): Source[] => [...tree.filter((s) => s.path !== file.path), file];

test('the owner rule fails on a write from outside the owner, through Kysely or raw SQL', (t) => {
  const approvals = withFile({ path: 'src/approvals/shortcut.ts', text: "export const f = (trx: any) => trx.updateTable('operations').set({ state: 'denied' }).execute();" });
  t.deepEqual(tableOwnerViolations(approvals), ['src/approvals/shortcut.ts:1 writes operations (updateTable) outside its owner']);
  const raw = withFile({ path: 'src/operations/claim.ts', text: "import { sql } from 'kysely';\nexport const g = (trx: any) => sql`delete from scope_holds where account_id = ${1}`.execute(trx);" });
  t.deepEqual(tableOwnerViolations(raw), ['src/operations/claim.ts:2 writes scope_holds (sql delete from) outside its owner']);
  const events = withFile({ path: 'src/operations/x.ts', text: "export const h = (trx: any) => trx.insertInto('events as e').values({}).execute();" });
  t.deepEqual(tableOwnerViolations(events), ['src/operations/x.ts:1 writes events (insertInto) outside its owner']);
  const sessions = withFile({ path: 'src/approvals/y.ts', text: "export const i = (trx: any) => trx.deleteFrom('ui_sessions').execute();" });
  t.deepEqual(tableOwnerViolations(sessions), ['src/approvals/y.ts:1 writes ui_sessions (deleteFrom) outside its owner']);
  const decisions = withFile({ path: 'src/operations/z.ts', text: "export const j = (trx: any) => trx.insertInto('approval_decisions').values({}).execute();" });
  t.deepEqual(tableOwnerViolations(decisions), ['src/operations/z.ts:1 writes approval_decisions (insertInto) outside its owner']);
});

test('the HTTP edge rule fails on a domain file importing koa, @koa/router or src/http, even for a type', (t) => {
  const koa = withFile({ path: 'src/operations/ctx.ts', text: "import type { Context } from 'koa';\nexport type C = Context;" });
  t.deepEqual(httpEdgeViolations(koa), ['src/operations/ctx.ts imports koa']);
  const router = withFile({ path: 'cli/commands/r.ts', text: "import Router from '@koa/router';\nexport const r = new Router();" });
  t.deepEqual(httpEdgeViolations(router), ['cli/commands/r.ts imports @koa/router']);
  const edge = withFile({ path: 'src/ledger/e.ts', text: "export { errorStatus } from '../http/error-status.js';" });
  t.deepEqual(httpEdgeViolations(edge), ['src/ledger/e.ts imports src/http/error-status.ts']);
});

test('the cycle rule fails on a new cycle, also one made of type-only imports', (t) => {
  const a = { path: 'src/core/cycle-a.ts', text: "import { b } from './cycle-b.js';\nexport const a = () => b;" };
  const b = { path: 'src/core/cycle-b.ts', text: "import type { A } from '../core/cycle-a.js';\nexport const b = 1 as unknown as A;\nexport type B = 1;" };
  t.deepEqual(cycles([...tree, a, b]), [['src/core/cycle-a.ts', 'src/core/cycle-b.ts']]);
  const self = { path: 'cli/self.ts', text: "export * from './self.js';" };
  t.deepEqual(cycles([...tree, self]), [['cli/self.ts']]);
});
