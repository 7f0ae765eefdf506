import test from 'ava';
import { epochMsOf, isoText, rfc3339 } from '../../src/core/time.js';

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

test('isoText writes what toISOString writes: every boundary of a day, month, year and era, and times spread over all four-digit years', (t) => {
  const checked: number[] = [];
  // Leap days and the days around them (1900 and 2100 are not leap years, 2000 is), the epoch, the first and last four-digit years.
  for (const day of ['0000-01-01', '0000-02-29', '0000-03-01', '1899-12-31', '1900-02-28', '1900-03-01', '1969-12-31', '1970-01-01', '1999-12-31', '2000-02-29', '2000-03-01', '2024-02-29', '2100-02-28', '2100-03-01', '9999-12-31']) {
    const start = Date.parse(`${day}T00:00:00.000Z`);
    checked.push(start - 1, start, start + 1, start + 86_399_999, start + 86_400_000);
  }
  checked.push(-62_167_219_200_001, -62_167_219_200_000, 253_402_300_799_999, 253_402_300_800_000, -8.64e15, 8.64e15, 0.5, -0.5, 1_764_600_000_000.7);
  // A fixed sequence spread over 0000–9999 and around now: the same numbers every run.
  let x = 0x2545f491;
  for (let i = 0; i < 20_000; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    checked.push(-62_167_219_200_000 + Math.floor((x / 2 ** 31) * 315_569_520_000_000), 1_764_600_000_000 + x);
  }
  const wrong = checked.filter((ms) => isoText(ms) !== new Date(ms).toISOString());
  t.deepEqual(wrong, []);
  t.throws(() => isoText(Number.NaN), { instanceOf: RangeError });
});
