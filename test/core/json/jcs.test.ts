import test from 'ava';
import { readFileSync } from 'node:fs';
import { canonicalBytes, canonicalize } from '../../../src/core/jcs.js';
import type { JsonValue } from '../../../src/core/json.js';
import { parseStrictJson } from '../../../src/core/strict-json.js';

interface NumberVector {
  ieee754: string;
  canonical: string | null;
  note?: string;
}
interface Example {
  name: string;
  input: string;
  canonical: string;
  value_order?: string[];
}

function vectors<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../../vectors/jcs/${name}`, import.meta.url), 'utf8')) as T;
}

const numbers = vectors<{ vectors: NumberVector[]; extra: NumberVector[] }>('appendix-b-numbers.json');
const examples = vectors<{ examples: Example[] }>('rfc8785-examples.json').examples;

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt('0x' + hex));
  return view.getFloat64(0);
}

test('the Appendix B table has all 26 rows of RFC 8785', (t) => {
  t.is(numbers.vectors.length, 26);
});

for (const { ieee754, canonical, note } of [...numbers.vectors, ...numbers.extra]) {
  const label = note ? ` (${note})` : '';
  if (canonical === null) {
    test(`the double ${ieee754} has no JSON form and is refused${label}`, (t) => {
      t.throws(() => canonicalize(fromBits(ieee754)), { instanceOf: TypeError });
    });
  } else {
    test(`the double ${ieee754} canonicalizes to ${canonical}${label}`, (t) => {
      t.is(canonicalize(fromBits(ieee754)), canonical);
      // The canonical text reads back as the same double (minus zero as zero).
      t.true(Number(canonical) === fromBits(ieee754));
    });
  }
}

for (const example of examples) {
  test(`${example.name}: parse then canonicalize gives the RFC output`, (t) => {
    const value = parseStrictJson(example.input);
    t.is(canonicalize(value), example.canonical);
    t.deepEqual(canonicalBytes(value), new TextEncoder().encode(example.canonical));
    if (example.value_order) {
      // Checked on the output text itself, independent of JS object key ordering.
      const positions = example.value_order.map((v) => example.canonical.indexOf(`"${v}"`));
      t.deepEqual([...positions].sort((a, b) => a - b), positions);
    }
  });
}

test('member order in the input does not change the canonical form, nested too', (t) => {
  const a = parseStrictJson('{"b":1,"a":{"y":[1,{"d":0,"c":0}],"x":null}}');
  const b = parseStrictJson('{"a":{"x":null,"y":[1,{"c":0,"d":0}]},"b":1}');
  t.is(canonicalize(a), canonicalize(b));
  t.is(canonicalize(a), '{"a":{"x":null,"y":[1,{"c":0,"d":0}]},"b":1}');
});

test('array order is kept', (t) => {
  t.is(canonicalize([3, 1, 2]), '[3,1,2]');
});

test('minus zero canonicalizes to 0, including as a parsed literal', (t) => {
  t.is(canonicalize(-0), '0');
  t.is(canonicalize(parseStrictJson('-0')), '0');
  t.is(canonicalize(parseStrictJson('-0.0e7')), '0');
});

test('keys are sorted by UTF-16 code units, so an astral character sorts before U+FB33', (t) => {
  // By code point U+1F600 > U+FB33; by UTF-16 code units 0xD83D < 0xFB33.
  t.is(canonicalize({ '\ufb33': 1, '\u{1f600}': 2, '\uffff': 3 }), '{"\u{1f600}":2,"\ufb33":1,"\uffff":3}');
});

test('strings use minimal JSON.stringify escaping with lower-case hex', (t) => {
  t.is(canonicalize('\u0000\u001f\b\f\n\r\t"\\/\u007f\u2028é'), '"\\u0000\\u001f\\b\\f\\n\\r\\t\\"\\\\/\u007f\u2028é"');
});

test('literals and empty containers', (t) => {
  t.is(canonicalize({ t: true, f: false, n: null, a: [], o: {} }), '{"a":[],"f":false,"n":null,"o":{},"t":true}');
});

test('a member named __proto__ is kept and sorted like any other', (t) => {
  const value = parseStrictJson('{"z":1,"__proto__":{"polluted":true}}');
  t.is(canonicalize(value), '{"__proto__":{"polluted":true},"z":1}');
  t.is(({} as Record<string, unknown>)['polluted'], undefined);
});

test('objects without a prototype canonicalize like plain objects', (t) => {
  const o = Object.create(null) as Record<string, JsonValue>;
  o['b'] = 1;
  o['a'] = 2;
  t.is(canonicalize(o), '{"a":2,"b":1}');
});

test('a lone surrogate in a string or a member name is refused', (t) => {
  t.throws(() => canonicalize('\ud800'), { instanceOf: TypeError });
  t.throws(() => canonicalize(['ok', 'x\udc00']), { instanceOf: TypeError, message: /\/1/ });
  t.throws(() => canonicalize({ '\ud83d': 1 }), { instanceOf: TypeError });
  t.is(canonicalize('\ud83d\ude00'), '"\u{1f600}"');
});

test('values with no JSON form are refused rather than dropped', (t) => {
  t.throws(() => canonicalize({ a: undefined } as unknown as JsonValue), { instanceOf: TypeError, message: /\/a/ });
  t.throws(() => canonicalize([() => 1] as unknown as JsonValue), { instanceOf: TypeError });
  t.throws(() => canonicalize(new Date(0) as unknown as JsonValue), { instanceOf: TypeError });
  t.throws(() => canonicalize(1n as unknown as JsonValue), { instanceOf: TypeError });
  t.throws(() => canonicalize(NaN), { instanceOf: TypeError });
  t.throws(() => canonicalize(-Infinity), { instanceOf: TypeError });
});

test('canonical bytes are the UTF-8 encoding', (t) => {
  t.deepEqual([...canonicalBytes({ '€': 'é' })], [...Buffer.from('{"€":"é"}', 'utf8')]);
});

test('canonicalize agrees with the JSON it came from on random documents', (t) => {
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const gen = (depth: number): JsonValue => {
    const r = rand();
    if (depth > 3 || r < 0.3) {
      const s = rand();
      if (s < 0.2) return rand() < 0.5;
      if (s < 0.3) return null;
      if (s < 0.6) return Math.round((rand() - 0.5) * 1e6) / (rand() < 0.5 ? 1 : 1000);
      return String.fromCharCode(...Array.from({ length: Math.floor(rand() * 5) }, () => 32 + Math.floor(rand() * 300)));
    }
    if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => gen(depth + 1));
    const o: Record<string, JsonValue> = {};
    for (let i = Math.floor(rand() * 4); i > 0; i--) o[String.fromCharCode(97 + Math.floor(rand() * 26), 0x100 + Math.floor(rand() * 300))] = gen(depth + 1);
    return o;
  };
  for (let i = 0; i < 500; i++) {
    const v = gen(0);
    const c = canonicalize(v);
    t.deepEqual(JSON.parse(c), v);
    t.is(canonicalize(parseStrictJson(c)), c);
    t.is(canonicalize(parseStrictJson(JSON.stringify(v, null, 2))), c);
  }
});
