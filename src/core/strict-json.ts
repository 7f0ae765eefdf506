/**
 * Strict RFC 8259 JSON intake (docs/formats.md, Canonical JSON; docs/http-api.md, Conventions).
 *
 * JSON.parse cannot be used: it silently keeps the last of two equal member
 * names, accepts lone surrogate escapes and rounds any number it is given. Each
 * of those would let two different texts share one fingerprint, or one text
 * mean two things to two parsers. This parser refuses them instead.
 *
 * It is iterative (an explicit stack), so no input and no `maxDepth` can
 * overflow the call stack, and it throws nothing but JsonInputError.
 *
 * Over 300 lines on purpose: one parser whose scanner, number and string rules share one cursor
 * and one stack in a single hot loop; split into modules, each rule would be read without the
 * state it depends on.
 */
import type { JsonObject, JsonValue } from './json.js';

export type JsonInputErrorCode = 'invalid_json' | 'duplicate_member' | 'unsafe_number';

export class JsonInputError extends Error {
  readonly code: JsonInputErrorCode;
  /** JSON Pointer (RFC 6901) of the value being read when the error was found; '' is the document itself. */
  readonly path?: string;
  /** Offset in UTF-16 code units into the decoded text (equal to the byte offset for ASCII input). */
  readonly offset?: number;

  constructor(code: JsonInputErrorCode, message: string, detail: { path?: string; offset?: number } = {}) {
    super(message);
    this.name = 'JsonInputError';
    this.code = code;
    if (detail.path !== undefined) this.path = detail.path;
    if (detail.offset !== undefined) this.offset = detail.offset;
  }
}

export interface StrictJsonOptions {
  /**
   * Deepest container nesting allowed. The outermost object or array is depth 1,
   * so `{"a":{"b":1}}` has depth 2 and a bare scalar has depth 0. Default 64.
   */
  maxDepth?: number;
}

export const DEFAULT_MAX_DEPTH = 64;

/** The characters a string may hold as they are: no quote, backslash, control character or surrogate. */
const PLAIN_RUN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parse one JSON text strictly; see the module comment. */
export function parseStrictJson(input: Uint8Array | string, options?: StrictJsonOptions): JsonValue {
  const maxDepth = options?.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!(Number.isInteger(maxDepth) && maxDepth >= 0)) {
    // A programming error, not bad input; still a JsonInputError so callers have one thing to catch.
    throw new JsonInputError('invalid_json', `maxDepth must be a non-negative integer, got ${String(maxDepth)}`);
  }
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else if (input instanceof Uint8Array) {
    try {
      text = decoder.decode(input);
    } catch {
      const at = firstInvalidUtf8Byte(input);
      throw new JsonInputError('invalid_json', `Invalid JSON: the input is not valid UTF-8 (bad byte sequence at byte ${at})`, {
        offset: at,
      });
    }
  } else {
    throw new JsonInputError('invalid_json', 'Invalid JSON: the input is neither text nor bytes');
  }
  return new Parser(text, maxDepth).parseDocument();
}

interface Frame {
  /** The array being filled, or null for an object frame. */
  array: JsonValue[] | null;
  object: JsonObject | null;
  /** Member name whose value is being parsed (object frames); undefined while the name itself is read. */
  key: string | undefined;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

class Parser {
  private pos = 0;
  private readonly stack: Frame[] = [];

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  parseDocument(): JsonValue {
    const text = this.text;
    if (text.charCodeAt(0) === 0xfeff) {
      this.fail('a byte order mark is not allowed', 0);
    }
    this.pos = this.skipWs(0);
    if (this.pos >= text.length) {
      this.fail(text.length === 0 ? 'the input is empty' : 'the input holds only whitespace', this.pos);
    }
    const value = this.parseTree();
    const end = this.skipWs(this.pos);
    if (end < text.length) {
      this.fail(`unexpected ${describe(text, end)} after the end of the JSON value`, end, '');
    }
    return value;
  }

  private parseTree(): JsonValue {
    const text = this.text;
    const stack = this.stack;
    let value: JsonValue;
    for (;;) {
      // Parse one value starting at this.pos (already past whitespace).
      const start = this.pos;
      const c = text.charCodeAt(start);
      if (c === 0x7b /* { */) {
        this.enter(start);
        const object: JsonObject = {};
        let p = this.skipWs(start + 1);
        if (text.charCodeAt(p) === 0x7d /* } */) {
          this.pos = p + 1;
          value = object;
        } else {
          const frame: Frame = { array: null, object, key: undefined };
          stack.push(frame);
          this.pos = p;
          this.readMemberName(frame, 'a member name or \'}\'');
          continue;
        }
      } else if (c === 0x5b /* [ */) {
        this.enter(start);
        const array: JsonValue[] = [];
        const p = this.skipWs(start + 1);
        if (text.charCodeAt(p) === 0x5d /* ] */) {
          this.pos = p + 1;
          value = array;
        } else {
          stack.push({ array, object: null, key: undefined });
          this.pos = p;
          continue;
        }
      } else if (c === 0x22 /* " */) {
        value = this.parseString(start);
      } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
        value = this.parseNumber(start);
      } else if (c === 0x74 /* t */ && text.startsWith('true', start)) {
        this.pos = start + 4;
        value = true;
      } else if (c === 0x66 /* f */ && text.startsWith('false', start)) {
        this.pos = start + 5;
        value = false;
      } else if (c === 0x6e /* n */ && text.startsWith('null', start)) {
        this.pos = start + 4;
        value = null;
      } else {
        this.unexpected(start, 'a JSON value');
      }

      // Hand the finished value to its container; close containers as they end.
      for (;;) {
        const frame = stack[stack.length - 1];
        if (frame === undefined) return value;
        const p = this.skipWs(this.pos);
        const d = text.charCodeAt(p);
        if (frame.array !== null) {
          frame.array.push(value);
          if (d === 0x2c /* , */) {
            this.pos = this.skipWs(p + 1);
            if (text.charCodeAt(this.pos) === 0x5d) this.fail('a trailing comma is not allowed in an array', p);
            break;
          }
          if (d === 0x5d /* ] */) {
            this.pos = p + 1;
            value = frame.array;
            stack.pop();
            continue;
          }
          this.unexpected(p, "',' or ']' after an array element");
        } else {
          const object = frame.object!;
          setMember(object, frame.key!, value);
          if (d === 0x2c /* , */) {
            this.pos = this.skipWs(p + 1);
            if (text.charCodeAt(this.pos) === 0x7d) this.fail('a trailing comma is not allowed in an object', p);
            this.readMemberName(frame, 'a member name');
            break;
          }
          if (d === 0x7d /* } */) {
            this.pos = p + 1;
            value = object;
            stack.pop();
            continue;
          }
          this.unexpected(p, "',' or '}' after an object member");
        }
      }
    }
  }

  /** Reads `"name" :` at this.pos into frame.key and leaves this.pos at the value. */
  private readMemberName(frame: Frame, expected: string): void {
    const text = this.text;
    const start = this.pos;
    frame.key = undefined;
    if (text.charCodeAt(start) !== 0x22) this.unexpected(start, expected);
    const key = this.parseString(start);
    if (Object.prototype.hasOwnProperty.call(frame.object, key)) {
      frame.key = key;
      throw new JsonInputError(
        'duplicate_member',
        `Duplicate member ${quoteShort(key)} at offset ${start} (${this.where()}): an object may name a member only once`,
        { path: this.pointer(), offset: start },
      );
    }
    frame.key = key;
    const p = this.skipWs(this.pos);
    if (text.charCodeAt(p) !== 0x3a /* : */) this.unexpected(p, "':' after a member name");
    this.pos = this.skipWs(p + 1);
  }

  private enter(at: number): void {
    if (this.stack.length + 1 > this.maxDepth) {
      this.fail(`nesting is deeper than the limit of ${this.maxDepth}`, at);
    }
  }

  private skipWs(p: number): number {
    const text = this.text;
    for (;;) {
      const c = text.charCodeAt(p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else return p;
    }
  }

  private parseString(start: number): string {
    const text = this.text;
    const len = text.length;
    let i = start + 1;
    let runStart = i;
    let out = '';
    for (;;) {
      PLAIN_RUN.lastIndex = i;
      PLAIN_RUN.test(text);
      i = PLAIN_RUN.lastIndex;
      if (i >= len) this.fail('unterminated string', start);
      const c = text.charCodeAt(i);
      if (c === 0x22 /* " */) {
        this.pos = i + 1;
        return runStart === start + 1 ? text.slice(runStart, i) : out + text.slice(runStart, i);
      }
      if (c === 0x5c /* \ */) {
        out += text.slice(runStart, i);
        const e = text.charCodeAt(i + 1);
        switch (e) {
          case 0x22: out += '"'; i += 2; break;
          case 0x5c: out += '\\'; i += 2; break;
          case 0x2f: out += '/'; i += 2; break;
          case 0x62: out += '\b'; i += 2; break;
          case 0x66: out += '\f'; i += 2; break;
          case 0x6e: out += '\n'; i += 2; break;
          case 0x72: out += '\r'; i += 2; break;
          case 0x74: out += '\t'; i += 2; break;
          case 0x75: {
            const unit = this.hex4(i + 2, i);
            if (unit >= 0xd800 && unit <= 0xdbff) {
              const low = text.charCodeAt(i + 6) === 0x5c && text.charCodeAt(i + 7) === 0x75 ? this.hex4(i + 8, i + 6) : -1;
              if (low < 0xdc00 || low > 0xdfff) {
                this.fail(`lone high surrogate escape \\u${text.slice(i + 2, i + 6)} (not followed by a \\u low surrogate escape)`, i);
              }
              out += String.fromCharCode(unit, low);
              i += 12;
            } else if (unit >= 0xdc00 && unit <= 0xdfff) {
              this.fail(`lone low surrogate escape \\u${text.slice(i + 2, i + 6)} (not preceded by a high surrogate escape)`, i);
            } else {
              out += String.fromCharCode(unit);
              i += 6;
            }
            break;
          }
          default:
            if (i + 1 >= len) this.fail('unterminated string', start);
            this.fail(`invalid escape ${describe(text, i + 1)} in a string`, i);
        }
        runStart = i;
        continue;
      }
      if (c < 0x20) {
        this.fail(`unescaped control character U+${hexUnit(c)} in a string`, i);
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        // Only reachable for string input: decoded UTF-8 never holds a lone surrogate.
        const next = text.charCodeAt(i + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          i += 2;
          continue;
        }
        this.fail(`lone surrogate U+${hexUnit(c)} in a string`, i);
      }
      i++;
    }
  }

  /** Four hex digits at p as a code unit; escapeAt is where the `\u` began, for the message. */
  private hex4(p: number, escapeAt: number): number {
    const text = this.text;
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = text.charCodeAt(p + k);
      let d: number;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
      else this.fail('a \\u escape needs exactly four hex digits', escapeAt);
      v = (v << 4) | d;
    }
    return v;
  }

  private parseNumber(start: number): number {
    const text = this.text;
    let i = start;
    let nonZeroDigit = false;
    let integerLiteral = true;
    if (text.charCodeAt(i) === 0x2d) i++;
    let c = text.charCodeAt(i);
    if (c === 0x30) {
      i++;
      c = text.charCodeAt(i);
      if (c >= 0x30 && c <= 0x39) this.fail('a number must not have leading zeros', start);
    } else if (c >= 0x31 && c <= 0x39) {
      nonZeroDigit = true;
      do c = text.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39);
    } else {
      this.fail("a digit must follow '-'", start);
    }
    if (c === 0x2e /* . */) {
      integerLiteral = false;
      c = text.charCodeAt(++i);
      if (!(c >= 0x30 && c <= 0x39)) this.fail("a digit must follow the decimal point", start);
      do {
        if (c !== 0x30) nonZeroDigit = true;
        c = text.charCodeAt(++i);
      } while (c >= 0x30 && c <= 0x39);
    }
    if (c === 0x65 || c === 0x45 /* e E */) {
      integerLiteral = false;
      c = text.charCodeAt(++i);
      if (c === 0x2b || c === 0x2d) c = text.charCodeAt(++i);
      if (!(c >= 0x30 && c <= 0x39)) this.fail('a digit must follow the exponent marker', start);
      do c = text.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39);
    }
    this.pos = i;
    const value = Number(text.slice(start, i));
    if (integerLiteral) {
      if (value > MAX_SAFE || value < -MAX_SAFE) {
        this.unsafe(start, i, 'is an integer outside ±(2^53 − 1); send large integers as strings');
      }
    } else if (value === Infinity || value === -Infinity) {
      this.unsafe(start, i, 'is too large for a double (it overflows to infinity)');
    } else if (value === 0 && nonZeroDigit) {
      this.unsafe(start, i, 'is too small for a double (a non-zero number underflows to zero)');
    }
    return value;
  }

  private unsafe(start: number, end: number, why: string): never {
    const literal = end - start > 40 ? `${this.text.slice(start, start + 32)}… (${end - start} characters)` : this.text.slice(start, end);
    throw new JsonInputError('unsafe_number', `Unsafe number ${literal} at offset ${start} (${this.where()}): it ${why}`, {
      path: this.pointer(),
      offset: start,
    });
  }

  private unexpected(at: number, expected: string): never {
    this.fail(`expected ${expected}, found ${describe(this.text, at)}`, at);
  }

  private fail(what: string, at: number, path: string | undefined = this.pointer()): never {
    const where = path === undefined ? '' : ` (${this.where(path)})`;
    throw new JsonInputError('invalid_json', `Invalid JSON at offset ${at}${where}: ${what}`, {
      ...(path === undefined ? {} : { path }),
      offset: at,
    });
  }

  private where(path: string = this.pointer()): string {
    return path === '' ? 'at the top level' : `at ${path}`;
  }

  /** JSON Pointer of the value being parsed: array frames point at the next index. */
  private pointer(): string {
    let out = '';
    for (const frame of this.stack) {
      if (frame.array !== null) out += '/' + String(frame.array.length);
      else if (frame.key !== undefined) out += '/' + frame.key.replace(/~/g, '~0').replace(/\//g, '~1');
      else break;
    }
    return out;
  }
}

/** Own data property even for `__proto__`, which plain assignment would treat as the prototype setter. */
function setMember(object: JsonObject, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

function describe(text: string, at: number): string {
  if (at >= text.length) return 'the end of the input';
  const c = text.charCodeAt(at);
  if (c >= 0x20 && c < 0x7f) return `'${text[at]}'`;
  const cp = text.codePointAt(at)!;
  return `character U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

function quoteShort(s: string): string {
  return s.length > 64 ? `${JSON.stringify(s.slice(0, 64))}… (${s.length} characters)` : JSON.stringify(s);
}

function hexUnit(c: number): string {
  return c.toString(16).toUpperCase().padStart(4, '0');
}

/** Byte offset of the first ill-formed UTF-8 sequence (only called once decoding has failed). */
function firstInvalidUtf8Byte(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const t = bytes[i + k];
      if (t === undefined) return i;
      if (k === 1 ? t < lo || t > hi : t < 0x80 || t > 0xbf) return i;
    }
    i += need + 1;
  }
  return n;
}
