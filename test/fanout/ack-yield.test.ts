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
  t.ok(await at(100, true), 'saturated, the fan-out behind: it yields');
  t.ok(await at(200, true, false), 'yielding, it is behind by its own doing: it goes on');
  t.ok(await at(400, false), 'within the probe it yields whatever the measure says');
  t.ok(await at(700, true), 'past the probe, still saturated without it: it goes on yielding');
  t.notOk(await at(800, false), 'no longer saturated: it runs');
});

t.test(
  'when the acknowledgements were saturated only by the fan-out, it runs on for the cool-down whatever the measure says',
  async (t) => {
    const { at } = onClock();
    t.ok(await at(0, true));
    t.notOk(await at(600, false), 'the probe found them below capacity by themselves');
    t.notOk(await at(1000, true), 'the measure is not heeded during the cool-down');
    t.notOk(await at(2500, true), 'nor at its end');
    t.ok(await at(2700, true), 'after it, it is');
  },
);

t.test('past the bound the fan-out runs however saturated the acknowledgements are; with no bound it never yields', async (t) => {
  const bounded = onClock(1000);
  t.ok(await bounded.at(999, true), 'its oldest entry younger than the bound');
  t.notOk(await bounded.at(1000, true), 'its oldest entry at the bound');
  const unbounded = onClock(0);
  t.notOk(await unbounded.at(0, true), 'maxLagMs 0');
});
