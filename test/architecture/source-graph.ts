import fs from 'node:fs';
import path from 'node:path';

/**
 * A scan of the repository's own TypeScript: who imports whom, and
 * which module writes which table. Pure functions over (path, text) pairs, so the rules can be
 * shown to fail on sources made up in the test.
 */
export interface Source {
  /** Repository-relative, with forward slashes. */
  path: string;
  text: string;
}

export interface ImportEdge {
  from: string;
  /** A repository path (resolved) or a package name. */
  to: string;
  typeOnly: boolean;
}

export interface TableWrite {
  file: string;
  table: string;
  how: string;
  line: number;
}

const RAW_WRITE = /\b(insert\s+into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?/gi;

export function readSources(root: string, dirs: string[]): Source[] {
  const sources: Source[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push({ path: rel, text: fs.readFileSync(path.join(root, rel), 'utf8') });
    }
  };
  for (const dir of dirs) if (fs.existsSync(path.join(root, dir))) walk(dir);
  return sources;
}

/**
 * The text with comments blanked (newlines kept, so line numbers hold) and strings kept. The
 * repository's TypeScript 7 has no JavaScript compiler API, and a comment that mentions
 * `updateTable('operations')` or an import must not count.
 */
export function stripComments(text: string): string {
  let out = '';
  let i = 0;
  const templateDepth: number[] = [];
  let braces = 0;
  while (i < text.length) {
    const c = text[i]!;
    const n = text[i + 1];
    if (c === '/' && n === '/') {
      while (i < text.length && text[i] !== '\n') { out += ' '; i++; }
    } else if (c === '/' && n === '*') {
      while (i < text.length && !(text[i] === '*' && text[i + 1] === '/')) { out += text[i] === '\n' ? '\n' : ' '; i++; }
      out += '  ';
      i += 2;
    } else if (c === "'" || c === '"') {
      out += c;
      i++;
      while (i < text.length && text[i] !== c && text[i] !== '\n') { if (text[i] === '\\') { out += text[i]; i++; } out += text[i]; i++; }
      out += text[i] ?? '';
      i++;
    } else if (c === '`' || (c === '}' && templateDepth.length > 0 && templateDepth[templateDepth.length - 1] === braces)) {
      // A template's text, up to its end or the next `${`.
      if (c === '}') templateDepth.pop();
      out += c;
      i++;
      while (i < text.length && text[i] !== '`' && !(text[i] === '$' && text[i + 1] === '{')) { if (text[i] === '\\') { out += text[i]; i++; } out += text[i]; i++; }
      if (text[i] === '$') { templateDepth.push(braces); out += '${'; i += 2; } else { out += text[i] ?? ''; i++; }
    } else {
      if (c === '{') braces++;
      if (c === '}') braces--;
      out += c;
      i++;
    }
  }
  return out;
}

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** `./x.js` from `src/a/b.ts` is `src/a/x.ts`; a package stays its name (`@koa/router`, `koa`, `node:fs`). */
export function resolveSpecifier(from: string, specifier: string, known: Set<string>): string {
  if (!specifier.startsWith('.')) return specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  for (const candidate of [joined.replace(/\.js$/, '.ts'), `${joined}.ts`, `${joined}/index.ts`, joined]) {
    if (known.has(candidate)) return candidate;
  }
  return joined.replace(/\.js$/, '.ts');
}

const STATIC_IMPORT = /(?:^|[;}\n])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"\n]+)['"]/g;
const BARE_IMPORT = /(?:^|[;}\n])\s*import\s*['"]([^'"\n]+)['"]/g;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g;

export function importsOf(source: Source, known: Set<string>): ImportEdge[] {
  const text = stripComments(source.text);
  const edges: ImportEdge[] = [];
  const add = (specifier: string, typeOnly: boolean) => edges.push({ from: source.path, to: resolveSpecifier(source.path, specifier, known), typeOnly });
  for (const m of text.matchAll(STATIC_IMPORT)) {
    const named = /^\{([\s\S]*)\}$/.exec(m[3]!.trim());
    const names = named ? named[1]!.split(',').map((x) => x.trim()).filter(Boolean) : [];
    add(m[4]!, Boolean(m[2]) || (names.length > 0 && names.every((x) => x.startsWith('type '))));
  }
  for (const m of text.matchAll(BARE_IMPORT)) add(m[1]!, false);
  for (const m of text.matchAll(DYNAMIC_IMPORT)) add(m[1]!, false);
  return edges;
}

const KYSELY_WRITE = /\.(insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(\s*['"`]([^'"`]+)['"`]/g;
const SQL_TEMPLATE = /\bsql(?:<[^>`]*>)?`([^`]*)`/g;

/** Kysely writes (`insertInto('t')`, `updateTable('t as x')`, …) and raw `sql` templates that insert, update or delete. */
export function tableWritesOf(source: Source): TableWrite[] {
  const text = stripComments(source.text);
  const writes: TableWrite[] = [];
  for (const m of text.matchAll(KYSELY_WRITE)) {
    writes.push({ file: source.path, table: m[2]!.trim().split(/\s+/)[0]!, how: m[1]!, line: lineAt(text, m.index!) });
  }
  for (const m of text.matchAll(SQL_TEMPLATE)) {
    for (const w of m[1]!.matchAll(RAW_WRITE)) {
      writes.push({ file: source.path, table: w[2]!.toLowerCase(), how: `sql ${w[1]!.toLowerCase().replace(/\s+/g, ' ')}`, line: lineAt(text, m.index! + 4 + w.index!) });
    }
  }
  return writes;
}

/** Every import cycle among the given files (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(edges: ImportEdge[], files: Set<string>): string[][] {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    if (!files.has(edge.from) || !files.has(edge.to)) continue;
    (next.get(edge.from) ?? next.set(edge.from, []).get(edge.from)!).push(edge.to);
  }
  // Tarjan's algorithm, iterative enough for a tree this size.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!indices.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indices.get(w)!));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const file of [...files].sort()) if (!indices.has(file)) connect(file);
  return cycles;
}
