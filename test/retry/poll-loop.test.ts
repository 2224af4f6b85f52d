import t from 'tap';
import { startPollLoop } from '../../src/retry/poll-loop.js';
import { waitFor } from '../helpers/wait.js';

/** A promise with its resolve at hand. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

t.test('one check at a time: a slow check holds the next back, and close waits for it', async (t) => {
  const gate = deferred();
  let started = 0;
  let running = 0;
  let most = 0;
  const loop = startPollLoop({
    intervalMs: 5,
    failed: (err) => {
      t.error(err, 'no check fails');
    },
    check: async () => {
      started += 1;
      running += 1;
      most = Math.max(most, running);
      if (started === 1) await gate.promise;
      running -= 1;
    },
  });
  t.equal(started, 1, 'the first check starts at once');
  // Twenty intervals pass while the first check runs: none of them starts another.
  const ticks = { count: 0 };
  const counter = setInterval(() => (ticks.count += 1), 5);
  await waitFor('twenty intervals', () => ticks.count >= 20);
  clearInterval(counter);
  t.equal(started, 1, 'no check started while the first ran');
  gate.resolve();
  await waitFor('the checks to go on', () => started >= 3);
  t.equal(most, 1, 'never two at once');

  const last = deferred();
  const slow = startPollLoop({ intervalMs: 5, failed: () => undefined, check: () => last.promise });
  let closed = false;
  const closing = slow.close().then(() => (closed = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(closed, 'close waits for the check under way');
  last.resolve();
  await closing;
  await loop.close();
});

t.test('a failed check is said, and the wait it answers holds the next one back', async (t) => {
  const times: number[] = [];
  const failures: unknown[] = [];
  let succeeded = 0;
  const loop = startPollLoop({
    intervalMs: 5,
    check: async () => {
      times.push(Date.now());
      if (times.length === 1) throw new Error('Redis away');
    },
    failed: (err) => {
      failures.push(err);
      return 200;
    },
    succeeded: () => (succeeded += 1),
  });
  t.teardown(() => loop.close());
  await waitFor('a check after the failed one', () => succeeded >= 1);
  t.match(failures, [{ message: 'Redis away' }]);
  t.ok(times[1]! - times[0]! >= 200, `the next check waited out the backoff (${times[1]! - times[0]!} ms)`);
});

t.test('a wake starts a check at once, or right after the one under way, not at the next interval', async (t) => {
  const gate = deferred();
  let started = 0;
  let succeeded = 0;
  const loop = startPollLoop({
    // An interval no test waits out: each check after the first is a wake's.
    intervalMs: 3_600_000,
    failed: (err) => {
      t.error(err, 'no check fails');
    },
    succeeded: () => {
      succeeded += 1;
    },
    check: async () => {
      started += 1;
      if (started === 2) await gate.promise;
    },
  });
  t.teardown(() => loop.close());
  await waitFor('the first check to end', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return started === 1;
  });
  await new Promise((resolve) => setImmediate(resolve));
  loop.wake();
  t.equal(started, 2, 'a wake while none runs starts one at once');
  loop.wake();
  loop.wake();
  t.equal(started, 2, 'a wake while one runs starts none beside it');
  gate.resolve();
  await waitFor('the check the wakes asked for to end', () => succeeded === 3);
  // Its end settles in promise callbacks, which all run before the next turn: a check it started would have begun.
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(started, 3, 'two wakes during a check: one check after it');
});
