/**
 * RFC 8785 JSON Canonicalization Scheme.
 *
 * Members sorted by UTF-16 code units, numbers in ECMAScript
 * Number.prototype.toString form, strings escaped as JSON.stringify does.
 * Values that have no JSON form (non-finite numbers, lone surrogates,
 * undefined, functions, class instances) are refused with a TypeError rather
 * than silently dropped or replaced, because a fingerprint must pin the meaning.
 */
import type { JsonValue } from './json.js';

const encoder = new TextEncoder();
/** In a `u` regex a surrogate pair is one code point, so this matches only lone surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** Anything JSON.stringify would escape, or any surrogate: strings without these are copied as they are. */
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

function quote(s: string, path: (string | number)[], what: string): string {
  if (!NEEDS_CARE.test(s)) return '"' + s + '"';
  if (LONE_SURROGATE.test(s)) refuse(path, what);
  return JSON.stringify(s);
}

export function canonicalize(value: JsonValue): string {
  return serialize(value, []);
}

/** The canonical form as UTF-8 bytes (what is hashed). */
export function canonicalBytes(value: JsonValue): Uint8Array {
  return encoder.encode(canonicalize(value));
}

/** `path` holds the member names and indexes leading to `value`, for error messages only. */
function serialize(value: unknown, path: (string | number)[]): string {
  switch (typeof value) {
    case 'string':
      return quote(value, path, 'a string with a lone UTF-16 surrogate');
    case 'number':
      if (!Number.isFinite(value)) refuse(path, `the number ${String(value)}`);
      return String(value); // ES Number::toString; String(-0) is "0"
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          path.push(i);
          out += serialize(value[i], path);
          path.pop();
        }
        return out + ']';
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) refuse(path, 'an object that is not a plain object');
      const object = value as Record<string, unknown>;
      // Default sort compares UTF-16 code units, which is exactly RFC 8785 §3.2.3.
      const keys = Object.keys(object).sort();
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        if (i > 0) out += ',';
        out += quote(key, path, 'a member name with a lone UTF-16 surrogate') + ':';
        path.push(key);
        out += serialize(object[key], path);
        path.pop();
      }
      return out + '}';
    }
    default:
      return refuse(path, `a value of type ${typeof value}`);
  }
}

function refuse(path: (string | number)[], what: string): never {
  const pointer = path.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
  throw new TypeError(`JCS cannot canonicalize ${what} (at ${pointer === '' ? 'the top level' : pointer})`);
}
