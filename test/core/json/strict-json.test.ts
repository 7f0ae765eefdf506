import test, { type ExecutionContext } from 'ava';
import type { JsonValue } from '../../../src/core/json.js';
import { JsonInputError, parseStrictJson, type JsonInputErrorCode } from '../../../src/core/strict-json.js';

function refused(
  t: ExecutionContext,
  input: string | Uint8Array,
  code: JsonInputErrorCode,
  options?: { maxDepth?: number },
): JsonInputError {
  const error = t.throws(() => parseStrictJson(input, options), { instanceOf: JsonInputError });
  t.is(error?.code, code, error?.message);
  return error!;
}

const bytes = (...b: number[]) => new Uint8Array(b);
const nest = (n: number, open = '[', close = ']', inner = '1') => open.repeat(n) + inner + close.repeat(n);

// --- accepted input --------------------------------------------------------------

test('a document with every kind of value is read as JSON.parse reads it', (t) => {
  const text = ' {"s":"a\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00é😀","n":[0,-0,1.5,-2e-3,1E+2,9007199254740991,-9007199254740991],"l":[true,false,null],"o":{},"a":[]}\r\n\t';
  t.deepEqual(parseStrictJson(text), JSON.parse(text) as JsonValue);
});

test('UTF-8 bytes are decoded, including multi-byte characters', (t) => {
  t.deepEqual(parseStrictJson(new TextEncoder().encode('{"€":"😀é"}')), { '€': '😀é' });
  t.deepEqual(parseStrictJson(Buffer.from('[1]')), [1]);
});

test('a bare scalar is a JSON text', (t) => {
  t.is(parseStrictJson('"x"'), 'x');
  t.is(parseStrictJson(' 12 '), 12);
  t.is(parseStrictJson('null'), null);
  t.is(parseStrictJson('true'), true);
});

test('a member named __proto__ is an ordinary own member and does not set the prototype', (t) => {
  const value = parseStrictJson('{"__proto__":{"admin":true},"a":1}') as Record<string, JsonValue>;
  t.is(Object.getPrototypeOf(value), Object.prototype);
  t.deepEqual(Object.keys(value), ['__proto__', 'a']);
  t.true(Object.prototype.hasOwnProperty.call(value, '__proto__'));
  t.is((value as { admin?: unknown }).admin, undefined);
  t.is(JSON.stringify(value), '{"__proto__":{"admin":true},"a":1}');
  t.is(({} as { admin?: unknown }).admin, undefined);
});

test('members named like Object.prototype methods are ordinary members, not duplicates', (t) => {
  t.deepEqual(Object.keys(parseStrictJson('{"toString":1,"constructor":2,"hasOwnProperty":3}') as object), [
    'toString',
    'constructor',
    'hasOwnProperty',
  ]);
});

test('the same member name in two different objects is not a duplicate', (t) => {
  t.deepEqual(parseStrictJson('{"a":{"a":1},"b":{"a":2}}'), { a: { a: 1 }, b: { a: 2 } });
});

test('zero written in any all-zero way is accepted', (t) => {
  for (const text of ['0', '-0', '0.0', '0e5', '0e-400', '-0.000E+999', '0.000000000000000000000']) {
    t.true(parseStrictJson(text) === 0, text);
  }
});

test('the largest safe integers are accepted', (t) => {
  t.is(parseStrictJson('9007199254740991'), 9007199254740991);
  t.is(parseStrictJson('-9007199254740991'), -9007199254740991);
});

test('a number with a fraction or exponent is a double, so a large one is accepted and rounded', (t) => {
  t.is(parseStrictJson('9007199254740993.0'), 9007199254740992);
  t.is(parseStrictJson('1e20'), 1e20);
  t.is(parseStrictJson('1.7976931348623157e308'), Number.MAX_VALUE);
});

test('a subnormal number is accepted, it is not zero', (t) => {
  t.is(parseStrictJson('5e-324'), 5e-324);
  t.is(parseStrictJson('1e-320'), 1e-320);
});

test('nesting of exactly 64 containers is accepted by default', (t) => {
  t.notThrows(() => parseStrictJson(nest(64)));
  t.notThrows(() => parseStrictJson(nest(63, '{"a":', '}', '{}')));
});

test('maxDepth counts the outermost container as 1', (t) => {
  t.deepEqual(parseStrictJson('{"a":{"b":1}}', { maxDepth: 2 }), { a: { b: 1 } });
  refused(t, '{"a":{"b":1}}', 'invalid_json', { maxDepth: 1 });
  t.is(parseStrictJson('7', { maxDepth: 0 }), 7);
  refused(t, '[]', 'invalid_json', { maxDepth: 0 });
});

test('a very deep maxDepth does not overflow the stack', (t) => {
  const deep = nest(200_000);
  t.notThrows(() => parseStrictJson(deep, { maxDepth: 300_000 }));
});

// --- not UTF-8, not JSON --------------------------------------------------------

test('bytes that are not UTF-8 are refused as invalid_json', (t) => {
  const e = refused(t, bytes(0x22, 0x61, 0xff, 0x22), 'invalid_json');
  t.regex(e.message, /UTF-8.*byte 2/);
});

test('a truncated UTF-8 sequence is refused as invalid_json', (t) => {
  refused(t, bytes(0x22, 0xe2, 0x82, 0x22), 'invalid_json');
  refused(t, bytes(0x22, 0xe2, 0x82), 'invalid_json');
});

test('an overlong UTF-8 encoding is refused as invalid_json', (t) => {
  refused(t, bytes(0x22, 0xc0, 0xaf, 0x22), 'invalid_json');
  refused(t, bytes(0x22, 0xe0, 0x80, 0xaf, 0x22), 'invalid_json');
});

test('a surrogate encoded directly in UTF-8 (CESU) is refused as invalid_json', (t) => {
  refused(t, bytes(0x22, 0xed, 0xa0, 0x80, 0x22), 'invalid_json');
});

test('a UTF-8 byte order mark is refused as invalid_json', (t) => {
  refused(t, bytes(0xef, 0xbb, 0xbf, 0x31), 'invalid_json');
  refused(t, '\ufeff1', 'invalid_json');
});

test('empty input is refused as invalid_json', (t) => {
  refused(t, '', 'invalid_json');
  refused(t, new Uint8Array(0), 'invalid_json');
});

test('whitespace-only input is refused as invalid_json', (t) => {
  refused(t, ' \n\t\r ', 'invalid_json');
});

test('a trailing comma in an array is refused as invalid_json', (t) => {
  refused(t, '[1,2,]', 'invalid_json');
});

test('a trailing comma in an object is refused as invalid_json', (t) => {
  refused(t, '{"a":1,}', 'invalid_json');
});

test('a leading or doubled comma is refused as invalid_json', (t) => {
  refused(t, '[,1]', 'invalid_json');
  refused(t, '[1,,2]', 'invalid_json');
  refused(t, '{,"a":1}', 'invalid_json');
});

test('comments are refused as invalid_json', (t) => {
  refused(t, '[1 /* two */]', 'invalid_json');
  refused(t, '// c\n1', 'invalid_json');
  refused(t, '1 # c', 'invalid_json');
});

test('a number with leading zeros is refused as invalid_json', (t) => {
  refused(t, '01', 'invalid_json');
  refused(t, '-007', 'invalid_json');
  refused(t, '[00]', 'invalid_json');
});

test('NaN and Infinity are refused as invalid_json', (t) => {
  for (const text of ['NaN', 'Infinity', '-Infinity', '[NaN]']) refused(t, text, 'invalid_json');
});

test('number forms JSON does not have are refused as invalid_json', (t) => {
  for (const text of ['+1', '.5', '1.', '1.e5', '1e', '1e+', '-', '0x10', '1_000', '- 1', '1 2']) {
    refused(t, text, 'invalid_json');
  }
});

test('single-quoted strings are refused as invalid_json', (t) => {
  refused(t, "'a'", 'invalid_json');
  refused(t, "{'a':1}", 'invalid_json');
});

test('unquoted member names are refused as invalid_json', (t) => {
  refused(t, '{a:1}', 'invalid_json');
});

test('a raw control character inside a string is refused as invalid_json', (t) => {
  for (const c of ['\u0000', '\t', '\n', '\r', '\u001f']) refused(t, `"a${c}b"`, 'invalid_json');
});

test('DEL and U+2028 inside a string are accepted (they are not JSON control characters)', (t) => {
  t.is(parseStrictJson('"\u007f\u2028"'), '\u007f\u2028');
});

test('an unknown escape is refused as invalid_json', (t) => {
  for (const e of ['\\x41', '\\a', '\\U0041', '\\0', "\\'"]) refused(t, `"${e}"`, 'invalid_json');
});

test('a \\u escape without four hex digits is refused as invalid_json', (t) => {
  for (const e of ['\\u41', '\\u004', '\\u00g1', '\\u']) refused(t, `"${e}"`, 'invalid_json');
});

test('an unterminated string is refused as invalid_json', (t) => {
  refused(t, '"abc', 'invalid_json');
  refused(t, '"abc\\', 'invalid_json');
  refused(t, '"abc\\"', 'invalid_json');
});

test('trailing garbage after the value is refused as invalid_json', (t) => {
  for (const text of ['1 x', '{} {}', '[1]]', 'nullx', 'truefalse', '"a""b"', '{"a":1}}']) refused(t, text, 'invalid_json');
});

test('misspelt or wrongly cased literals are refused as invalid_json', (t) => {
  for (const text of ['True', 'nul', 'NULL', 'fals', 'undefined']) refused(t, text, 'invalid_json');
});

test('a missing colon, value or closing bracket is refused as invalid_json', (t) => {
  for (const text of ['{"a" 1}', '{"a":}', '{"a"}', '[1', '{"a":1', '[', '{', ']', '}', ':']) {
    refused(t, text, 'invalid_json');
  }
});

test('non-JSON whitespace between tokens is refused as invalid_json', (t) => {
  for (const ws of ['\u00a0', '\u000b', '\u000c', '\u2028', '\ufeff']) refused(t, `[1,${ws}2]`, 'invalid_json');
});

test('nesting deeper than 64 is refused as invalid_json', (t) => {
  const e = refused(t, nest(65), 'invalid_json');
  t.regex(e.message, /deeper than the limit of 64/);
  refused(t, nest(64, '{"a":', '}', '{}'), 'invalid_json');
  refused(t, nest(100_000), 'invalid_json');
});

// --- surrogates -----------------------------------------------------------------

test('a lone high surrogate escape is refused as invalid_json', (t) => {
  const e = refused(t, '"a\\ud800b"', 'invalid_json');
  t.regex(e.message, /lone high surrogate/);
  refused(t, '"\\uD83D"', 'invalid_json');
});

test('a lone low surrogate escape is refused as invalid_json', (t) => {
  const e = refused(t, '"\\udc00"', 'invalid_json');
  t.regex(e.message, /lone low surrogate/);
});

test('a high surrogate escape followed by something other than a low surrogate escape is refused as invalid_json', (t) => {
  refused(t, '"\\ud83d\\u0041"', 'invalid_json');
  refused(t, '"\\ud83d\\ud83d"', 'invalid_json');
  refused(t, '"\\ud83d\\n"', 'invalid_json');
});

test('a surrogate pair escaped in the wrong order is refused as invalid_json', (t) => {
  refused(t, '"\\ude00\\ud83d"', 'invalid_json');
});

test('a lone surrogate in a member name is refused as invalid_json', (t) => {
  refused(t, '{"\\ud800":1}', 'invalid_json');
});

test('a raw lone surrogate in string input is refused as invalid_json', (t) => {
  refused(t, '"\ud800"', 'invalid_json');
  refused(t, '"\udc00x"', 'invalid_json');
  refused(t, '"\\ud83d\ude00"', 'invalid_json');
  t.is(parseStrictJson('"\ud83d\ude00"'), '\u{1f600}');
});

// --- duplicate members ----------------------------------------------------------

test('the same member name twice is refused as duplicate_member', (t) => {
  const e = refused(t, '{"a":1,"b":2,"a":3}', 'duplicate_member');
  t.is(e.path, '/a');
  t.regex(e.message, /Duplicate member "a" at offset 13/);
});

test('a member name repeated through an escape is refused as duplicate_member', (t) => {
  refused(t, '{"a":1,"\\u0061":2}', 'duplicate_member');
  refused(t, '{"\\/":1,"/":2}', 'duplicate_member');
  refused(t, '{"\\ud83d\\ude00":1,"😀":2}', 'duplicate_member');
});

test('a duplicate __proto__ member is refused as duplicate_member', (t) => {
  refused(t, '{"__proto__":1,"__proto__":2}', 'duplicate_member');
});

test('a duplicate member deep inside is refused as duplicate_member with its JSON Pointer', (t) => {
  const e = refused(t, '{"x":[0,{"a/b":{"~":1,"~":2}}]}', 'duplicate_member');
  t.is(e.path, '/x/1/a~1b/~0');
});

test('member names that differ only by Unicode normalisation are not duplicates', (t) => {
  t.deepEqual(Object.keys(parseStrictJson('{"\u00e9":1,"e\u0301":2}') as object), ['\u00e9', 'e\u0301']);
});

// --- unsafe numbers -------------------------------------------------------------

test('an integer literal above 2^53 − 1 is refused as unsafe_number', (t) => {
  const e = refused(t, '{"amount":9007199254740992}', 'unsafe_number');
  t.is(e.path, '/amount');
  t.regex(e.message, /9007199254740992.*2\^53/);
  refused(t, '9007199254740993', 'unsafe_number');
  refused(t, '123456789012345678901234567890', 'unsafe_number');
});

test('an integer literal below −(2^53 − 1) is refused as unsafe_number', (t) => {
  refused(t, '-9007199254740992', 'unsafe_number');
});

test('a literal that overflows to infinity is refused as unsafe_number', (t) => {
  refused(t, '1e400', 'unsafe_number');
  refused(t, '-1e400', 'unsafe_number');
  refused(t, '1.8e308', 'unsafe_number');
  refused(t, '[1, 0.5E+999]', 'unsafe_number');
});

test('a non-zero literal that underflows to zero is refused as unsafe_number', (t) => {
  refused(t, '1e-400', 'unsafe_number');
  refused(t, '-0.000001e-400', 'unsafe_number');
  refused(t, '0.0000000001e-330', 'unsafe_number');
  refused(t, '2e-324', 'unsafe_number');
});

test('a very long integer literal is refused as unsafe_number with a shortened message', (t) => {
  const e = refused(t, '1'.repeat(100_000), 'unsafe_number');
  t.true(e.message.length < 300);
});

// --- messages -------------------------------------------------------------------

test('messages give the offset and the JSON Pointer of the problem', (t) => {
  const e = refused(t, '{"items":[1,{"sku":01}]}', 'invalid_json');
  t.is(e.offset, 19);
  t.is(e.path, '/items/1/sku');
  t.is(e.message, 'Invalid JSON at offset 19 (at /items/1/sku): a number must not have leading zeros');
});

test('a syntax error says what was expected and what was found', (t) => {
  const e = refused(t, '[1 2]', 'invalid_json');
  t.regex(e.message, /expected ',' or '\]' after an array element, found '2'/);
  const end = refused(t, '{"a":', 'invalid_json');
  t.regex(end.message, /found the end of the input/);
});

test('JsonInputError is an Error with its name set', (t) => {
  const e = refused(t, 'x', 'invalid_json');
  t.true(e instanceof Error);
  t.is(e.name, 'JsonInputError');
});

// --- fuzz -----------------------------------------------------------------------

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** JSON.parse as an oracle for inputs both may read: strict must accept only what JSON.parse accepts, and agree on it. */
function checkAgainstJsonParse(t: ExecutionContext, input: Uint8Array | string): void {
  let strict: JsonValue | JsonInputError;
  try {
    strict = parseStrictJson(input);
  } catch (error) {
    if (!(error instanceof JsonInputError)) {
      t.fail(`threw ${String(error)} for ${JSON.stringify(typeof input === 'string' ? input : [...input])}`);
      return;
    }
    strict = error;
  }
  if (strict instanceof JsonInputError) return;
  const text = typeof input === 'string' ? input : new TextDecoder().decode(input);
  let loose: unknown;
  try {
    loose = JSON.parse(text);
  } catch {
    t.fail(`strict accepted what JSON.parse refuses: ${JSON.stringify(text)}`);
    return;
  }
  if (JSON.stringify(loose) !== JSON.stringify(strict)) t.fail(`disagreement on ${JSON.stringify(text)}`);
}

test('random bytes only ever produce a value or a JsonInputError', (t) => {
  const rand = prng(1);
  for (let i = 0; i < 20_000; i++) {
    const b = new Uint8Array(Math.floor(rand() * 24));
    for (let k = 0; k < b.length; k++) {
      // Bias towards JSON punctuation so the parser gets past the first byte.
      b[k] = rand() < 0.5 ? '{}[]":,0123456789-+.eE\\u tfnrl"a'.charCodeAt(Math.floor(rand() * 33)) : Math.floor(rand() * 256);
    }
    checkAgainstJsonParse(t, b);
  }
  t.pass();
});

test('mutated valid documents only ever produce a value or a JsonInputError, and agree with JSON.parse when accepted', (t) => {
  const rand = prng(2);
  const seeds = [
    '{"a":[1,2.5,-3e2,true,false,null],"b":{"c":"d\\u00e9\\n\\ud83d\\ude00"},"__proto__":0}',
    '[{"x":0},{"y":[[]]},"s\\"t",-0.0,1E-7]',
    '{"amount":9007199254740991,"note":"€"}',
  ];
  const alphabet = '{}[]":,0123456789-+.eE\\/ubfnrt \u0000\u00e9\ud800\udc00x';
  for (let i = 0; i < 20_000; i++) {
    const chars = [...seeds[i % seeds.length]!];
    for (let m = 1 + Math.floor(rand() * 3); m > 0; m--) {
      const at = Math.floor(rand() * (chars.length + 1));
      const op = rand();
      const ch = alphabet[Math.floor(rand() * alphabet.length)]!;
      if (op < 0.33) chars.splice(at, 1);
      else if (op < 0.66) chars.splice(at, 0, ch);
      else chars[at] = ch;
    }
    const text = chars.join('');
    checkAgainstJsonParse(t, text);
    checkAgainstJsonParse(t, new TextEncoder().encode(text));
  }
  t.pass();
});

test('a value that is neither a string nor bytes is refused as invalid_json', (t) => {
  refused(t, 42 as unknown as string, 'invalid_json');
  refused(t, null as unknown as string, 'invalid_json');
});
