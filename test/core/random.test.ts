import test from 'ava';
import { randomBytes } from '../../src/core/random.js';

test('pooled random bytes have the asked length, never repeat across the pool refill, and are copies', (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const bytes = randomBytes(24);
    t.is(bytes.length, 24);
    const hex = bytes.toString('hex');
    t.false(seen.has(hex));
    seen.add(hex);
  }
  const a = randomBytes(16);
  const copy = Buffer.from(a);
  randomBytes(16);
  t.deepEqual(a, copy, 'a later draw does not change bytes already handed out');
});

test('a request larger than the pool is served whole', (t) => {
  t.is(randomBytes(10_000).length, 10_000);
});
