import test from 'ava';
import { createHash } from 'node:crypto';
import { MerkleFrontier, SubtreeRange, emptyRoot, leafHash, nodeHash } from '../../../src/core/merkle.js';
import { hex, refLeafHash, rootOfLeaves } from './merkle-reference.js';

function eventHashFor(i: number): Uint8Array {
  return createHash('sha256').update(`event ${i}`).digest();
}

test('empty tree root is SHA-256 of the empty string', (t) => {
  const empty = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
  t.is(hex(new MerkleFrontier().root()), empty);
  t.is(hex(emptyRoot()), empty);
  t.is(hex(rootOfLeaves([])), empty);
});

test('leaf and node hashes follow RFC 6962 domain separation', (t) => {
  const e = eventHashFor(1);
  t.is(hex(leafHash(e)), hex(refLeafHash(e)));
  const l = eventHashFor(2);
  const r = eventHashFor(3);
  t.is(hex(nodeHash(l, r)), createHash('sha256').update(Buffer.from([1])).update(l).update(r).digest('hex'));
  t.throws(() => leafHash(new Uint8Array(31)), { instanceOf: RangeError });
});

test('frontier root equals the recursive reference for sizes 0..70', (t) => {
  const f = new MerkleFrontier();
  const leaves: Uint8Array[] = [];
  for (let n = 0; n <= 70; n++) {
    t.is(f.size, n);
    t.is(hex(f.root()), hex(rootOfLeaves(leaves)), `size ${n}`);
    t.true(f.toJSON().length <= Math.floor(Math.log2(Math.max(n, 1))) + 1);
    const leaf = refLeafHash(eventHashFor(n + 1));
    leaves.push(leaf);
    f.append(leafHash(eventHashFor(n + 1)));
  }
});

test('frontier survives a serialization round trip at every size and keeps growing correctly', (t) => {
  const leaves: Uint8Array[] = [];
  let f = new MerkleFrontier();
  for (let n = 0; n <= 70; n++) {
    const saved = JSON.parse(JSON.stringify({ size: f.size, hashes: f.toJSON() })) as { size: number; hashes: string[] };
    f = MerkleFrontier.from(saved.size, saved.hashes);
    t.is(f.size, n);
    t.is(hex(f.root()), hex(rootOfLeaves(leaves)));
    const leaf = leafHash(eventHashFor(1000 + n));
    leaves.push(leaf);
    f.append(leaf);
  }
  // root() must not disturb the frontier
  const before = f.toJSON();
  f.root();
  f.root();
  t.deepEqual(f.toJSON(), before);
});

test('toJSON is the hex of the roots at every size, however the frontier was reached: appended, restored, cloned, grown apart', (t) => {
  // toJSON keeps the hex of roots it already converted; what it answers must not depend on that.
  const hexOfRoots = (leaves: Uint8Array[]) => {
    const fresh = new MerkleFrontier();
    for (const leaf of leaves) fresh.append(leaf);
    return fresh.toJSON();
  };
  const leaves: Uint8Array[] = [];
  let f = new MerkleFrontier();
  for (let n = 0; n < 300; n++) {
    if (n % 7 === 0) f = MerkleFrontier.from(f.size, f.toJSON());
    if (n % 5 === 0) {
      const copy = f.clone();
      copy.append(leafHash(eventHashFor(9000 + n)));
      copy.toJSON();
    }
    if (n % 3 === 0) t.deepEqual(f.toJSON(), hexOfRoots(leaves), `size ${n}`);
    const leaf = leafHash(eventHashFor(1000 + n));
    leaves.push(leaf);
    f.append(leaf);
  }
  const answered = f.toJSON();
  answered[0] = 'changed by the caller';
  t.deepEqual(f.toJSON(), hexOfRoots(leaves), 'the caller gets a copy');
});

test('MerkleFrontier.from refuses inconsistent input', (t) => {
  const h = 'ab'.repeat(32);
  t.throws(() => MerkleFrontier.from(3, [h]), { instanceOf: RangeError }); // 3 needs 2 hashes
  t.throws(() => MerkleFrontier.from(0, [h]), { instanceOf: RangeError });
  t.throws(() => MerkleFrontier.from(1, ['AB'.repeat(32)]), { instanceOf: RangeError });
  t.throws(() => MerkleFrontier.from(1, ['ab']), { instanceOf: RangeError });
  t.throws(() => MerkleFrontier.from(-1, []), { instanceOf: RangeError });
  t.notThrows(() => MerkleFrontier.from(2 ** 40 + 5, [h, h, h]));
});

// certificate-transparency merkle_tree_test.cc / RFC 6962 test vectors: arbitrary leaf data.
const CT_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((h) => Buffer.from(h, 'hex'));

const CT_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

test('RFC 6962 test vector roots (certificate-transparency) for sizes 1..8', (t) => {
  const f = new MerkleFrontier();
  CT_LEAVES.forEach((data, i) => {
    f.append(refLeafHash(data));
    t.is(hex(f.root()), CT_ROOTS[i]!, `size ${i + 1}`);
    t.is(hex(rootOfLeaves(CT_LEAVES.slice(0, i + 1).map(refLeafHash))), CT_ROOTS[i]!, `reference, size ${i + 1}`);
  });
});

test('appendEventHash equals append(leafHash(bytes)) and refuses non-hex', (t) => {
  const a = new MerkleFrontier();
  const b = new MerkleFrontier();
  for (let i = 0; i < 37; i++) {
    const e = eventHashFor(i);
    a.appendEventHash(Buffer.from(e).toString('hex'));
    b.append(leafHash(e));
    t.is(a.rootHex(), hex(b.root()));
  }
  t.deepEqual(a.toJSON(), b.toJSON());
  t.deepEqual(a.clone().toJSON(), a.toJSON());
  for (const bad of ['ab'.repeat(31), 'ab'.repeat(31) + 'zz', 'x'.repeat(64), 'ab'.repeat(33)]) {
    t.throws(() => a.appendEventHash(bad), { instanceOf: RangeError });
  }
  t.is(a.size, 37);
});

/** The leaf-by-leaf frontier over the first n leaves (eventHashFor(1..n)). */
function frontierOf(n: number): MerkleFrontier {
  const f = new MerkleFrontier();
  for (let i = 1; i <= n; i++) f.appendEventHash(Buffer.from(eventHashFor(i)).toString('hex'));
  return f;
}

test('SubtreeRange: subtrees from any start, cut anywhere, append to the same frontier and roots as leaf by leaf', (t) => {
  // Starts and cuts that are not powers of two (and some that are), runs across several levels.
  const levels = new Uint8Array(256);
  const hashes = Buffer.alloc(256 * 32);
  for (const start of [0, 1, 2, 3, 5, 7, 8, 13, 16, 31, 33, 64, 100]) {
    for (const cuts of [[], [1], [3, 4, 9], [6, 7, 17, 40], [31, 32, 33]]) {
      const end = start + 45;
      const f = frontierOf(start);
      const range = new SubtreeRange(start);
      const ends = [...cuts.map((c) => start + c).filter((c) => c < end), end];
      let size = start;
      for (const stop of ends) {
        for (; size < stop; size++) range.appendEventHash(Buffer.from(eventHashFor(size + 1)).toString('hex'));
        const n = range.take(levels, hashes, 0);
        t.is(range.count, 0);
        // Never more than two subtrees per level between two cuts.
        t.true(n <= 2 * (Math.floor(Math.log2(Math.max(stop - (f.size), 1))) + 1), `start ${start} stop ${stop}: ${n} subtrees`);
        for (let i = 0; i < n; i++) f.appendSubtreeAt(levels[i]!, hashes, i * 32);
        t.is(f.size, stop);
        const reference = frontierOf(stop);
        t.deepEqual(f.toJSON(), reference.toJSON(), `start ${start}, cuts ${cuts}, at ${stop}`);
        t.is(f.rootHex(), reference.rootHex());
      }
    }
  }
  // And against the independent recursive reference, at a size that is no power of two.
  const leaves = Array.from({ length: 77 }, (_, i) => refLeafHash(eventHashFor(i + 1)));
  const f = frontierOf(11);
  const range = new SubtreeRange(11);
  for (let i = 12; i <= 77; i++) range.appendEventHash(Buffer.from(eventHashFor(i)).toString('hex'));
  const n = range.take(levels, hashes, 0);
  for (let i = 0; i < n; i++) f.appendSubtreeAt(levels[i]!, hashes, i * 32);
  t.is(hex(f.root()), hex(rootOfLeaves(leaves)));
});

test('appendSubtreeAt refuses a subtree that is not aligned where it would land', (t) => {
  const f = frontierOf(6);
  const root4 = Buffer.alloc(32, 7);
  t.throws(() => f.appendSubtreeAt(2, root4, 0), { instanceOf: RangeError }); // 6 is not a multiple of 4
  t.throws(() => f.appendSubtreeAt(-1, root4, 0), { instanceOf: RangeError });
  t.throws(() => f.appendSubtreeAt(1, root4, 8), { instanceOf: RangeError }); // past the buffer
  t.is(f.size, 6);
  f.appendSubtreeAt(1, root4, 0);
  t.is(f.size, 8);
  t.throws(() => new SubtreeRange(-1), { instanceOf: RangeError });
  t.throws(() => new SubtreeRange(0).take(new Uint8Array(0), Buffer.alloc(0), 1), { instanceOf: RangeError });
});
