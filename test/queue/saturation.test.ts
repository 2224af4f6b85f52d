import t from 'tap';
import { Saturation } from '../../src/queue/saturation.js';
import { accepted, envelopeOf } from '../helpers/envelope.js';
import { startEventQueue } from '../helpers/event-queue.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

/** A Saturation on a clock the test moves. */
function onClock() {
  let nowMs = 0;
  const saturation = new Saturation({ windowMs: 100, now: () => nowMs });
  return { saturation, at: (ms: number) => void (nowMs = ms) };
}

t.test('saturated once a whole window was spent full for the threshold share, and no longer after a window with room', async (t) => {
  const { saturation, at } = onClock();
  saturation.mark(true);
  at(50);
  t.notOk(saturation.saturated, 'not before the first window ends');
  saturation.mark(false);
  saturation.mark(true);
  at(100);
  t.ok(saturation.saturated, 'full all the window (a full stretch still open counts)');
  at(150);
  t.ok(saturation.saturated, 'the verdict holds until the next window ends');
  at(160);
  saturation.mark(false);
  at(200);
  t.ok(saturation.saturated, 'full 60 % of a window: half of it is enough (a load at capacity keeps the writer full 56 to 68 %)');
  saturation.mark(true);
  at(240);
  saturation.mark(false);
  at(300);
  t.notOk(saturation.saturated, 'full 40 % of a window: below half');
  saturation.mark(true);
  at(320);
  saturation.mark(false);
  at(400);
  t.notOk(saturation.saturated, 'full 20 % of the window');
});

t.test('the event queue counts as saturated while deliveries keep its writer full, and not once they stop', async (t) => {
  const redis = await startRedis(t);
  const { eventQueue } = await startEventQueue(t, redis);
  t.notOk(eventQueue.saturated(), 'idle');
  let sending = true;
  // Enough deliveries at once that Redis always has the next batch queued behind the one it runs.
  const senders = Array.from({ length: 64 }, async () => {
    while (sending) await eventQueue.enqueue(accepted(envelopeOf('gp')));
  });
  await waitFor('the acknowledgements saturated', () => eventQueue.saturated());
  sending = false;
  await Promise.all(senders);
  await waitFor('the acknowledgements no longer saturated', () => !eventQueue.saturated());
  t.pass('saturated under a load at capacity, and not once it stopped');
});
