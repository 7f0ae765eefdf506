import test from 'ava';
import { newId } from '../../src/core/ids.js';

test('ids sort by their creation time, whatever their random part', (t) => {
  const times = [0, 1, 31, 32, 1_000, 1_764_600_000_000, 1_764_600_000_001, 1_764_600_032_000, 2 ** 49];
  const ids = times.map((ms) => newId('op', ms));
  t.deepEqual([...ids].sort(), ids);
  // And many drawn in the same millisecond are all different.
  t.is(new Set(Array.from({ length: 10_000 }, () => newId('op', 1_764_600_000_000))).size, 10_000);
});

test('an id is the prefix, 10 time characters and 21 random ones, in characters cursors accept', (t) => {
  const id = newId('op', 1_764_600_000_000);
  t.regex(id, /^op_[0-9a-hjkmnp-tv-z]{31}$/);
  t.regex(id, /^op_[A-Za-z0-9_-]{1,64}$/);
  t.true(id.startsWith('op_01kbd5pbg0'), id); // 1,764,600,000,000 ms in base32
});

test('the random part carries the bits it claims: every character position varies', (t) => {
  const ids = Array.from({ length: 2_000 }, () => newId('apr', 0).slice('apr_'.length + 10));
  for (let position = 0; position < 21; position++) {
    const seen = new Set(ids.map((id) => id[position]));
    // The last character holds 4 bits (16 values); the others 5 (32).
    t.true(seen.size >= (position === 20 ? 16 : 32) - 2, `position ${position}: ${seen.size} values`);
  }
});
