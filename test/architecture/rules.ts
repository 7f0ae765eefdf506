import { importCycles, importsOf, tableWritesOf, type Source } from './source-graph.js';

/**
 * The house rules (ARCHITECTURE.md): each table has one owner, the HTTP edge is the only
 * importer of Koa and of src/http, and no import cycle exists.
 */

/** Which files may write each table. A table not listed here may be written from anywhere in its domain. */
export const TABLE_OWNERS: Record<string, (file: string) => boolean> = {
  // State changes are transitions.ts's; the claim's insert and the approval pointer operation-rows.ts's; taking a scope scope-holds.ts's.
  operations: (f) => ['src/operations/transitions.ts', 'src/operations/operation-rows.ts'].includes(f),
  scope_holds: (f) => ['src/operations/transitions.ts', 'src/operations/scope-holds.ts'].includes(f),
  operation_reports: (f) => f.startsWith('src/operations/'),
  events: (f) => f.startsWith('src/ledger/'),
  chains: (f) => f.startsWith('src/ledger/'),
  checkpoints: (f) => f.startsWith('src/ledger/'),
  accounts: (f) => f.startsWith('src/ledger/'),
  principals: (f) => f.startsWith('src/principals/'),
  ui_sessions: (f) => f.startsWith('src/principals/'),
  approvals: (f) => f.startsWith('src/approvals/'),
  approval_decisions: (f) => f.startsWith('src/approvals/'),
  webhook_outbox: (f) => f.startsWith('src/approvals/'),
};

const HTTP_PACKAGES = new Set(['koa', '@koa/router']);

/**
 * Files outside src/http that may import it: the `serve` verb is the process entry that starts
 * the HTTP edge (as the composition root builds the domains), and imports nothing else of it.
 */
const HTTP_ENTRY_POINTS = new Set(['cli/commands/serve.ts']);

export function tableOwnerViolations(sources: Source[]): string[] {
  const out: string[] = [];
  for (const source of sources) {
    if (!source.path.startsWith('src/') && !source.path.startsWith('cli/')) continue;
    for (const write of tableWritesOf(source)) {
      const owner = TABLE_OWNERS[write.table];
      if (owner && !owner(write.file)) out.push(`${write.file}:${write.line} writes ${write.table} (${write.how}) outside its owner`);
    }
  }
  return out;
}

export function httpEdgeViolations(sources: Source[]): string[] {
  const known = new Set(sources.map((s) => s.path));
  const out: string[] = [];
  for (const source of sources) {
    if (source.path.startsWith('src/http/') || HTTP_ENTRY_POINTS.has(source.path)) continue;
    if (!source.path.startsWith('src/') && !source.path.startsWith('cli/')) continue;
    for (const edge of importsOf(source, known)) {
      if (HTTP_PACKAGES.has(edge.to) || edge.to.startsWith('src/http/')) out.push(`${source.path} imports ${edge.to}`);
    }
  }
  return out;
}

/** Type-only imports count too: a cycle of types is still two modules that cannot be read one without the other. */
export function cycles(sources: Source[]): string[][] {
  const known = new Set(sources.map((s) => s.path));
  const edges = sources.flatMap((s) => importsOf(s, known));
  const inScope = new Set([...known].filter((f) => f.startsWith('src/') || f.startsWith('cli/')));
  return importCycles(edges, inScope);
}
