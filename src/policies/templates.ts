/**
 * `business_key` and `exclusive_scope` templates (docs/formats.md#policies-file), e.g.
 * `"deploy:{/environment}"`: each `{…}` is an RFC 6901 JSON Pointer into the
 * prepared command; `{{` and `}}` stand for literal braces. The template is
 * parsed once when the policies file loads, so a malformed one stops start-up
 * instead of failing on the first claim.
 */
import type { JsonValue } from '../core/json.js';
import { DomainError } from '../core/errors.js';
import { hasNul } from '../core/stored-text.js';
import claimOperation from '../../schema/requests/claim-operation.json' with { type: 'json' };

type Part = { literal: string } | { pointer: string; tokens: string[] };

export interface Template {
  readonly source: string;
  /** The key for this command; DomainError command_invalid when a pointer finds nothing usable. */
  render(command: JsonValue): string;
}

/** Thrown at load time with the offset in the template where it went wrong. */
export class TemplateError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

/** The claim members a policy may build from the command. */
export type TemplateMember = 'business_key' | 'exclusive_scope';

export function parseTemplate(source: string, member: TemplateMember): Template {
  const parts = parseParts(source);
  const maxLength = maxLengthOf(member);
  return {
    source,
    render: (command) => checkRendered(parts.map((part) => ('literal' in part ? part.literal : renderPointer(command, part, member))).join(''), source, member, maxLength),
  };
}

/**
 * The bound a claim's own business_key or exclusive_scope is held to, read from the claim schema so
 * that a key given in the body and one built from the command can never drift apart.
 */
function maxLengthOf(member: TemplateMember): number {
  return claimOperation.properties[member].maxLength;
}

/**
 * A key built from the command is held to the bounds of one given in the body: 1 to the schema's
 * maxLength characters and no U+0000. Past them it is the command's fault (it fills the template),
 * so command_invalid.
 */
function checkRendered(key: string, source: string, member: TemplateMember, maxLength: number): string {
  const problem = key.length === 0 ? 'is empty' : key.length > maxLength ? `is ${key.length} characters, over ${maxLength}`
    : hasNul(key) ? 'contains U+0000 (NUL)' : null;
  if (problem === null) return key;
  throw new DomainError('command_invalid', `the policy's ${member} built from the command (template ${JSON.stringify(source)}) ${problem}`, {
    errors: [{ path: '', message: `must fill the policy's ${member} template with 1–${maxLength} characters and no U+0000` }],
  });
}

function parseParts(source: string): Part[] {
  const parts: Part[] = [];
  let literal = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '}') {
      if (source[i + 1] !== '}') throw new TemplateError(`a lone '}' at character ${i + 1}; write '}}' for a literal brace`, i);
      literal += '}';
      i++;
    } else if (c === '{') {
      if (source[i + 1] === '{') {
        literal += '{';
        i++;
        continue;
      }
      const end = source.indexOf('}', i + 1);
      if (end === -1) throw new TemplateError(`the '{' at character ${i + 1} is never closed; write '{{' for a literal brace`, i);
      const pointer = source.slice(i + 1, end);
      if (literal) parts.push({ literal });
      literal = '';
      parts.push({ pointer, tokens: parsePointer(pointer, i + 1) });
      i = end;
    } else {
      literal += c;
    }
  }
  if (literal) parts.push({ literal });
  return parts;
}

/** RFC 6901 §3: "" or a sequence of "/token"; `~` only as `~0` or `~1`. */
function parsePointer(pointer: string, offset: number): string[] {
  if (pointer.includes('{')) throw new TemplateError(`'{' inside the placeholder at character ${offset}; a placeholder holds one JSON Pointer`, offset);
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new TemplateError(`"{${pointer}}" at character ${offset} is not a JSON Pointer (RFC 6901): it must start with '/', e.g. {/${pointer}}`, offset);
  }
  if (/~(?![01])/.test(pointer)) {
    throw new TemplateError(`"{${pointer}}" at character ${offset}: '~' in a JSON Pointer must be written ~0, and '/' inside a name ~1`, offset);
  }
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function renderPointer(command: JsonValue, part: { pointer: string; tokens: string[] }, member: string): string {
  const value = resolvePointer(command, part.tokens);
  if (value === undefined) {
    throw new DomainError('command_invalid', `the policy's ${member} reads ${part.pointer || '"" (the whole command)'} but the command has nothing there`, {
      errors: [{ path: part.pointer, message: `must be present: the policy's ${member} is built from it` }],
    });
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : 'an object';
  throw new DomainError('command_invalid', `the policy's ${member} reads ${part.pointer || '"" (the whole command)'} but the command has ${kind} there, not a string, number or boolean`, {
    errors: [{ path: part.pointer, message: `must be a string, number or boolean: the policy's ${member} is built from it` }],
  });
}

/** Own members only: a pointer like /__proto__ or /constructor must not reach into prototypes. */
export function resolvePointer(value: JsonValue, tokens: string[]): JsonValue | undefined {
  let current: JsonValue | undefined = value;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      // RFC 6901 §4: an index is 0 or digits without a leading zero; '-' names no element.
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      current = current[Number(token)];
    } else if (current !== null && typeof current === 'object') {
      current = Object.prototype.hasOwnProperty.call(current, token) ? current[token] : undefined;
    } else {
      return undefined;
    }
    if (current === undefined) return undefined;
  }
  return current;
}
