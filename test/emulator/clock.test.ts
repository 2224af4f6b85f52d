import t from 'tap';
import { DAY_MS, EmulatorClock, utcDay } from '../../src/emulator/clock.js';

/** A real-time source the test moves by hand. */
function fakeRealTime(start: number): { now: () => number; tick: (ms: number) => void } {
  let current = start;
  return { now: () => current, tick: (ms) => (current += ms) };
}

t.test('utcDay counts UTC calendar days since the epoch', async (t) => {
  t.equal(utcDay(0), 0);
  t.equal(utcDay(DAY_MS - 1), 0, 'the last millisecond of 1970-01-01');
  t.equal(utcDay(DAY_MS), 1, 'midnight UTC starts the next day');
  t.equal(utcDay(Date.UTC(2024, 0, 1, 23, 59)), 19723);
  t.equal(utcDay(-1), -1, 'before the epoch is day -1, not day 0');
});

t.test('without an offset the clock follows real time', async (t) => {
  const before = Date.now();
  const now = new EmulatorClock().now();
  t.ok(now >= before && now <= Date.now());
  t.equal(new EmulatorClock().offsetMs, 0);
});

t.test('set jumps to a moment and time flows on from there', async (t) => {
  const real = fakeRealTime(1_000_000);
  const clock = new EmulatorClock({ realNow: real.now });
  const target = Date.UTC(2030, 5, 1);
  clock.set(target);
  t.equal(clock.now(), target);
  real.tick(250);
  t.equal(clock.now(), target + 250);
  t.equal(clock.offsetMs, target - 1_000_000);
});

t.test('advanceDays moves the clock by whole and fractional days, forwards and back', async (t) => {
  const real = fakeRealTime(Date.UTC(2024, 0, 1, 12));
  const clock = new EmulatorClock({ realNow: real.now });
  clock.advanceDays(3);
  t.equal(utcDay(clock.now()), utcDay(Date.UTC(2024, 0, 4)));
  clock.advanceDays(-0.5);
  t.equal(clock.now(), Date.UTC(2024, 0, 4, 0));
  clock.set(Date.UTC(2024, 1, 1));
  clock.advanceDays(1);
  t.equal(clock.now(), Date.UTC(2024, 1, 2), 'advanceDays adds to a set time');
});

t.test('a non-finite time or day count is refused and leaves the clock as it was', async (t) => {
  const real = fakeRealTime(5000);
  const clock = new EmulatorClock({ realNow: real.now });
  t.throws(() => clock.set(Number.NaN), RangeError);
  t.throws(() => clock.advanceDays(Number.POSITIVE_INFINITY), RangeError);
  t.equal(clock.now(), 5000);
});
