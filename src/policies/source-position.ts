/**
 * Where a JSON Pointer lands in the JSON text it was parsed from, so config
 * errors can name a line and column. The text has already passed the strict
 * parser, so this scanner only has to find its way, not to judge.
 */

export interface Position {
  line: number;
  column: number;
}

/**
 * Offset of what `pointer` names: the member's name when it ends at an object
 * member (that is what a reader looks for), else the value. Stops at the
 * deepest part of the pointer that exists.
 */
export function offsetOfPointer(text: string, pointer: string): number {
  const tokens = pointer === '' ? [] : pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let at = skipWs(text, 0);
  for (const [index, token] of tokens.entries()) {
    const found = text[at] === '{' ? findMember(text, at, token) : text[at] === '[' ? findElement(text, at, token) : null;
    if (found === null) return at;
    at = found.value;
    if (index === tokens.length - 1 && found.name !== null) return found.name;
  }
  return at;
}

/** 1-based line and column (in UTF-16 code units) of an offset. */
export function positionOf(text: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function findMember(text: string, open: number, name: string): { name: number; value: number } | null {
  let at = skipWs(text, open + 1);
  while (text[at] === '"') {
    const nameAt = at;
    const end = skipString(text, at);
    const key = JSON.parse(text.slice(at, end)) as string;
    at = skipWs(text, skipWs(text, end) + 1); // past ':'
    if (key === name) return { name: nameAt, value: at };
    at = skipWs(text, skipValue(text, at));
    if (text[at] !== ',') return null;
    at = skipWs(text, at + 1);
  }
  return null;
}

function findElement(text: string, open: number, token: string): { name: null; value: number } | null {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return null;
  let at = skipWs(text, open + 1);
  if (text[at] === ']') return null;
  for (let index = 0; ; index++) {
    if (index === Number(token)) return { name: null, value: at };
    at = skipWs(text, skipValue(text, at));
    if (text[at] !== ',') return null;
    at = skipWs(text, at + 1);
  }
}

/** End offset of the value starting at `at`; counts brackets outside strings, so it needs no recursion. */
function skipValue(text: string, at: number): number {
  let depth = 0;
  let i = at;
  do {
    const c = text[i];
    if (c === '"') {
      i = skipString(text, i);
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (depth === 0) {
      // A scalar at the top: runs until a delimiter.
      while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
      return i;
    }
    i++;
  } while (depth > 0 && i < text.length);
  return i;
}

function skipString(text: string, at: number): number {
  let i = at + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

function skipWs(text: string, at: number): number {
  while (at < text.length && /[ \t\r\n]/.test(text[at]!)) at++;
  return at;
}
