import t, { type Test } from 'tap';
import { EmulatorClock, utcDay } from '../../src/emulator/clock.js';
import {
  FailureLog,
  formatFailuresByDay,
  shouldDeactivate,
  type DeactivationPolicy,
} from '../../src/emulator/delivery/deactivation-policy.js';

const DAY_1 = Date.UTC(2024, 2, 1, 9, 30);
const FIVE_OVER_FIVE: DeactivationPolicy = { numberOfFailures: 5, daysInPast: 5 };

/**
 * One webhook living through the days on the emulator clock: `fail()` records a failed delivery now and
 * tells whether the policy deactivates the webhook, as the engine asks after every failure.
 */
function webhookUnder(policy: DeactivationPolicy) {
  const clock = new EmulatorClock({ realNow: () => DAY_1 });
  const log = new FailureLog();
  return {
    fail(): boolean {
      log.record('hook', clock.now());
      return shouldDeactivate(log.failuresByDay('hook'), utcDay(clock.now()), policy);
    },
    deactivatedToday(): boolean {
      return shouldDeactivate(log.failuresByDay('hook'), utcDay(clock.now()), policy);
    },
    nextDay(days = 1): void {
      clock.advanceDays(days);
    },
  };
}

t.test('spec example (a): one failure a day for five days deactivates on day 5, not before', async (t) => {
  const hook = webhookUnder(FIVE_OVER_FIVE);
  for (let day = 1; day <= 4; day += 1) {
    t.equal(hook.fail(), false, `day ${day}`);
    hook.nextDay();
  }
  t.equal(hook.fail(), true, 'day 5');
});

t.test('spec example (b): three failures on day 1 and two on day 2 deactivate on day 2', async (t) => {
  const hook = webhookUnder(FIVE_OVER_FIVE);
  t.same([hook.fail(), hook.fail(), hook.fail()], [false, false, false], 'day 1');
  hook.nextDay();
  t.equal(hook.fail(), false, 'day 2, fourth failure');
  t.equal(hook.fail(), true, 'day 2, fifth failure');
});

/** Example (c): 2 failures on day 1, none on day 2, 2 on day 3, none on days 4 and 5; the clock ends on day 5. */
function exampleC(t: Test): ReturnType<typeof webhookUnder> {
  const hook = webhookUnder(FIVE_OVER_FIVE);
  t.same([hook.fail(), hook.fail()], [false, false], 'day 1');
  hook.nextDay(2);
  t.same([hook.fail(), hook.fail()], [false, false], 'day 3');
  hook.nextDay(2);
  return hook;
}

t.test('spec example (c): 2 on day 1, none on day 2, 2 on day 3, none on days 4 and 5 does not deactivate', async (t) => {
  const hook = exampleC(t);
  t.equal(hook.deactivatedToday(), false, 'day 5: four failures in the window');
});

t.test('spec example (d): on day 6 the window is days 2-6 and three more failures deactivate', async (t) => {
  const hook = exampleC(t);
  hook.nextDay();
  t.equal(hook.fail(), false, 'day 6, 1st: day 1 left the window, day 3 holds 2, total 3');
  t.equal(hook.fail(), false, 'day 6, 2nd: total 4');
  t.equal(hook.fail(), true, 'day 6, 3rd: total 5');
});

t.test('numberOfFailures 1 deactivates on the first failure', async (t) => {
  t.equal(webhookUnder({ numberOfFailures: 1, daysInPast: 5 }).fail(), true);
});

t.test('daysInPast 1 counts today only', async (t) => {
  const hook = webhookUnder({ numberOfFailures: 2, daysInPast: 1 });
  t.equal(hook.fail(), false, 'day 1');
  hook.nextDay();
  t.equal(hook.fail(), false, 'day 2: yesterday does not count');
  t.equal(hook.fail(), true, 'day 2: the second of the day');
});

t.test('failures on a day after today (the clock was set back) are outside the window', async (t) => {
  const failures = new Map([
    [110, 3],
    [100, 1],
  ]);
  t.equal(shouldDeactivate(failures, 100, { numberOfFailures: 2, daysInPast: 5 }), false);
  t.equal(shouldDeactivate(failures, 110, { numberOfFailures: 2, daysInPast: 5 }), true);
});

t.test('the failure log counts per webhook per UTC day and clear forgets one webhook', async (t) => {
  const log = new FailureLog();
  const midnight = Date.UTC(2024, 2, 2);
  log.record('a', midnight - 1);
  log.record('a', midnight);
  log.record('a', midnight + 3_600_000);
  log.record('b', midnight);
  t.same(
    [...log.failuresByDay('a')],
    [
      [utcDay(midnight) - 1, 1],
      [utcDay(midnight), 2],
    ],
  );
  log.failuresByDay('a').clear();
  t.equal(log.failuresByDay('a').size, 2, 'callers get a copy');
  log.clear('a');
  t.equal(log.failuresByDay('a').size, 0);
  t.same([...log.failuresByDay('b')], [[utcDay(midnight), 1]], 'other webhooks keep their count');
});

t.test('formatFailuresByDay keys the counts by ISO date in day order', async (t) => {
  const day = utcDay(Date.UTC(2024, 2, 2));
  t.same(
    formatFailuresByDay(
      new Map([
        [day, 2],
        [day - 1, 1],
      ]),
    ),
    { '2024-03-01': 1, '2024-03-02': 2 },
  );
  t.same(
    Object.keys(
      formatFailuresByDay(
        new Map([
          [day, 2],
          [day - 1, 1],
        ]),
      ),
    ),
    ['2024-03-01', '2024-03-02'],
  );
});
