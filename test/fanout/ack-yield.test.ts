import t from 'tap';
import { createAckYield } from '../../src/fanout/ack-yield.js';

/** An AckYield on a clock the test moves, with one entry after every cursor, stored at 0 ms. */
function onClock(maxLagMs = 10_000) {
  let nowMs = 0;
  let saturated = false;
  const ackYield = createAckYield({
    saturated: () => saturated,
    maxLagMs,
    nextAfter: () => Promise.resolve('0-0'),
    probeMs: 500,
    holdMs: 300,
    coolMs: 2000,
    now: () => nowMs,
  });
  return {
    at: (ms: number, isSaturated: boolean, behind = true) => {
      nowMs = ms;
      saturated = isSaturated;
      return ackYield.shouldYield('cursor', behind);
    },
  };
}

t.test('a yield lasts the probe, goes on while the acknowledgements are saturated by themselves, and ends when they are not', async (t) => {
  const { at } = onClock();
  t.notOk(await at(0, false), 'below capacity: the fan-out runs');
  t.notOk(await at(50, true, false), 'saturated, but the fan-out keeps up with the log: it runs');
  t.notOk(await at(100, true), 'saturated, the fan-out behind: not yet held long enough');
  t.ok(await at(400, true), 'saturated and behind for the hold: it yields');
  t.ok(await at(500, true, false), 'yielding, it is behind by its own doing: it goes on');
  t.ok(await at(700, false), 'within the probe it yields whatever the measure says');
  t.ok(await at(1000, true), 'past the probe, still saturated without it: it goes on yielding');
  t.notOk(await at(1100, false), 'no longer saturated: it runs');
});

t.test(
  'when the acknowledgements were saturated only by the fan-out, it runs on for the cool-down whatever the measure says',
  async (t) => {
    const { at } = onClock();
    t.notOk(await at(0, true));
    t.ok(await at(300, true));
    t.notOk(await at(900, false), 'the probe found them below capacity by themselves');
    t.notOk(await at(1300, true), 'the measure is not heeded during the cool-down');
    t.notOk(await at(2800, true), 'nor at its end');
    t.notOk(await at(3000, true), 'after it, it is: held from here');
    t.ok(await at(3300, true), 'and yields once held');
  },
);

t.test('a single busy moment begins no yield: the saturation must hold, the fan-out behind, all the while', async (t) => {
  const { at } = onClock();
  t.notOk(await at(0, true), 'saturated and behind');
  t.notOk(await at(250, false), 'a moment later, no longer saturated');
  t.notOk(await at(400, true), 'saturated again: the hold starts over');
  t.notOk(await at(650, true, false), 'the fan-out caught up');
  t.notOk(await at(800, true), 'behind again: the hold starts over');
  t.notOk(await at(1000, true), 'held 200 ms of 300');
  t.ok(await at(1100, true), 'held 300 ms: it yields');
});

t.test('past the bound the fan-out runs however saturated the acknowledgements are; with no bound it never yields', async (t) => {
  const bounded = onClock(1000);
  t.notOk(await bounded.at(0, true));
  t.ok(await bounded.at(999, true), 'its oldest entry younger than the bound');
  t.notOk(await bounded.at(1000, true), 'its oldest entry at the bound');
  const unbounded = onClock(0);
  t.notOk(await unbounded.at(0, true), 'maxLagMs 0');
});
