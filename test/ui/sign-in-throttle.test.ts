import test from 'ava';
import type { Clock } from '../../src/core/time.js';
import { clientOf, SIGN_IN_LIMITS, SignInThrottle, type Admission } from '../../src/http/pages/sign-in-throttle.js';

// The throttle alone, on a clock the test moves: no store is involved (the HTTP behaviour is in sign-in-lockout.test.ts).

class ManualClock implements Clock {
  ms = 1_000_000;
  now(): number {
    return this.ms;
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

function failOnce(throttle: SignInThrottle, client: string): ReturnType<Extract<Admission, { admitted: true }>['attempt']['recordFailure']> {
  const admission = throttle.admit(client);
  if (!admission.admitted) throw new Error(`${client} was refused, retry after ${admission.retryAfterSeconds} s`);
  const lock = admission.attempt.recordFailure();
  admission.attempt.end();
  return lock;
}

function succeedOnce(throttle: SignInThrottle, client: string): boolean {
  const admission = throttle.admit(client);
  if (admission.admitted) admission.attempt.end();
  return admission.admitted;
}

test('the fifth failure inside a minute locks the client for 60 s, and the next attempt is refused with that wait', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock);
  for (let i = 1; i <= 4; i++) t.is(failOnce(throttle, '192.0.2.1'), null, `failure ${i} does not lock`);
  t.deepEqual(failOnce(throttle, '192.0.2.1'), { lockedForSeconds: 60 });
  clock.advance(10);
  t.deepEqual(throttle.admit('192.0.2.1'), { admitted: false, retryAfterSeconds: 50 });
});

test('failures spread wider than the one-minute window never lock (a sliding window, not a running count)', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock);
  for (let i = 0; i < 20; i++) {
    t.is(failOnce(throttle, '192.0.2.1'), null);
    clock.advance(15); // four failures per minute: one below the limit
  }
});

test('once the clock passes the lock the client is admitted again, and each lock in a row doubles up to 15 min', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock);
  const locks: number[] = [];
  for (let round = 0; round < 6; round++) {
    let lock = null;
    for (let i = 0; i < SIGN_IN_LIMITS.failuresAllowed; i++) lock = failOnce(throttle, '192.0.2.1');
    locks.push(lock!.lockedForSeconds);
    clock.advance(lock!.lockedForSeconds - 1);
    t.false(throttle.admit('192.0.2.1').admitted, 'still locked one second before the end');
    clock.advance(1);
  }
  t.deepEqual(locks, [60, 120, 240, 480, 900, 900]);
  t.true(succeedOnce(throttle, '192.0.2.1'));
});

test('an hour without a failure forgets the strikes: the next lock is the first one again', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock);
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 5; i++) failOnce(throttle, '192.0.2.1');
    clock.advance(15 * 60);
  }
  clock.advance(60 * 60);
  for (let i = 0; i < 4; i++) failOnce(throttle, '192.0.2.1');
  t.deepEqual(failOnce(throttle, '192.0.2.1'), { lockedForSeconds: 60 });
});

test('attempts still in flight count against the limit, so parallel guesses cannot overrun it', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock);
  const admitted = Array.from({ length: 20 }, () => throttle.admit('192.0.2.1')).filter((a) => a.admitted);
  t.is(admitted.length, 5);
  t.deepEqual(throttle.admit('192.0.2.1'), { admitted: false, retryAfterSeconds: 1 });
  for (const a of admitted) a.attempt.end(); // all succeeded
  t.true(throttle.admit('192.0.2.1').admitted);
});

test('successes are not counted and leave no record, and they do not wipe the failures before them', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock);
  for (let i = 0; i < 50; i++) t.true(succeedOnce(throttle, '192.0.2.1'));
  t.is(throttle.size, 0);
  for (let i = 0; i < 4; i++) failOnce(throttle, '192.0.2.1');
  t.true(succeedOnce(throttle, '192.0.2.1'), 'a success does not add to the failures');
  t.deepEqual(failOnce(throttle, '192.0.2.1'), { lockedForSeconds: 60 }, 'nor does it wipe them');
  t.false(throttle.admit('192.0.2.1').admitted);
});

test('another client is not affected by a locked-out one', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock);
  for (let i = 0; i < 5; i++) failOnce(throttle, '192.0.2.1');
  t.false(throttle.admit('192.0.2.1').admitted);
  t.true(succeedOnce(throttle, '192.0.2.2'));
  t.is(failOnce(throttle, '192.0.2.2'), null);
});

test('memory is bounded: past maxClients the least recently seen client is evicted first', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock, { ...SIGN_IN_LIMITS, maxClients: 100 });
  for (let i = 0; i < 5; i++) failOnce(throttle, 'locked');
  failOnce(throttle, 'first');
  for (let i = 0; i < 98; i++) failOnce(throttle, `other-${i}`);
  t.is(throttle.size, 100);
  t.false(throttle.admit('locked').admitted, 'still locked while the map is at its bound');
  for (let i = 0; i < 5000; i++) failOnce(throttle, `cycled-${i}`);
  t.is(throttle.size, 100, 'an attacker cycling addresses cannot grow it');
  t.true(throttle.admit('locked').admitted, 'the lock was evicted with its record');
});

test('the oldest record is evicted, not the one just used', (t) => {
  const clock = new ManualClock();
  const throttle = new SignInThrottle(clock, { ...SIGN_IN_LIMITS, maxClients: 2 });
  for (let i = 0; i < 5; i++) failOnce(throttle, 'a');
  failOnce(throttle, 'b');
  t.false(throttle.admit('a').admitted); // a is now the most recently seen
  failOnce(throttle, 'c'); // evicts b
  t.is(throttle.size, 2);
  t.false(throttle.admit('a').admitted);
});

test('a client is its IPv4 address, an IPv4-mapped IPv6 address is that IPv4 address, and IPv6 counts by /64', (t) => {
  t.is(clientOf('192.0.2.7'), '192.0.2.7');
  t.is(clientOf('::ffff:192.0.2.7'), '192.0.2.7');
  t.is(clientOf('::FFFF:192.0.2.7'), '192.0.2.7');
  t.is(clientOf('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.is(clientOf('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  t.is(clientOf('2001:db8::1'), '2001:db8:0:0::/64');
  t.is(clientOf('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.is(clientOf('::1'), '0:0:0:0::/64');
  t.is(clientOf('64:ff9b::192.0.2.7'), '64:ff9b:0:0::/64');
  t.not(clientOf('2001:db8:1:2::1'), clientOf('2001:db8:1:3::1'));
});
