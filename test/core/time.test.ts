import test from 'ava';
import { epochMsOf, rfc3339 } from '../../src/core/time.js';

// rfc3339 and epochMsOf keep the last two timestamps written: whatever order they are called in, each
// must answer exactly what toISOString and Date.parse would.
test('rfc3339 and epochMsOf answer as toISOString and Date.parse, in any order of calls', (t) => {
  const times = [0, 1_764_600_000_000, 1_764_600_000_000, 1_764_600_000_001, 1_764_600_000_000, 1_764_600_000_001, 1_764_600_000_002, 1_764_600_000_000, -1, 253_402_300_799_999, 1];
  for (const ms of times) {
    t.is(rfc3339(ms), new Date(ms).toISOString());
    t.is(epochMsOf(rfc3339(ms)), ms);
  }
  // A timestamp written elsewhere (another instance, an older row) is parsed, not taken for the last one.
  rfc3339(1_764_600_000_000);
  t.is(epochMsOf('2025-12-01T14:40:00.123Z'), Date.parse('2025-12-01T14:40:00.123Z'));
  t.is(epochMsOf('2025-12-01T14:40:00.123+01:00'), Date.parse('2025-12-01T14:40:00.123+01:00'));
  t.true(Number.isNaN(epochMsOf('')));
  t.true(Number.isNaN(epochMsOf('not a time')));
});

test('rfc3339 of an invalid time throws every time, as toISOString does', (t) => {
  t.throws(() => rfc3339(Number.NaN), { instanceOf: RangeError });
  t.throws(() => rfc3339(Number.NaN), { instanceOf: RangeError });
  t.throws(() => rfc3339(8.64e15 + 1), { instanceOf: RangeError });
  // The failure left the last good timestamp as it was.
  t.is(rfc3339(5), '1970-01-01T00:00:00.005Z');
  t.is(epochMsOf('1970-01-01T00:00:00.005Z'), 5);
});
