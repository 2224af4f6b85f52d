import t from 'tap';
import { LoopLoad, type ProcessTime } from '../../src/queue/loop-load.js';
import { startEventQueue } from '../helpers/event-queue.js';
import { startRedis } from '../helpers/redis.js';

/** A process whose time the test moves: each step, ms of its loop running callbacks, waiting for work, and of CPU. */
function processOnClock() {
  let time: ProcessTime = { active: 0, idle: 0, cpu: 0 };
  return {
    time: () => time,
    run: (active: number, idle: number, cpu = active) =>
      void (time = { active: time.active + active, idle: time.idle + idle, cpu: time.cpu + cpu }),
  };
}

t.test('busy once a whole window ran callbacks on a core, and not after a window that waited for work or for a core', async (t) => {
  const clock = processOnClock();
  const load = new LoopLoad({ windowMs: 100, time: clock.time });
  clock.run(60, 0);
  t.notOk(load.busy, 'not before the window ends');
  clock.run(40, 0);
  t.ok(load.busy, 'callbacks all the window');
  clock.run(50, 0);
  t.ok(load.busy, 'the verdict holds until the next window ends');
  clock.run(30, 20);
  t.notOk(load.busy, 'callbacks 80 % of the window: the loop waited for work');
  clock.run(100, 0, 30);
  t.notOk(load.busy, 'callbacks all the window, on a core 30 % of it: waiting for a core on a busy machine');
  clock.run(95, 5, 60);
  t.ok(load.busy, 'callbacks 95 % of the window, on a core 60 % of it');
});

t.test('the event queue counts as saturated while its process runs at capacity, with no delivery queued in Redis', async (t) => {
  const redis = await startRedis(t);
  const clock = processOnClock();
  const { eventQueue } = await startEventQueue(t, redis, { processTime: clock.time });
  clock.run(300, 0);
  t.ok(eventQueue.saturated(), 'its loop busy a whole window on a core');
  clock.run(100, 200);
  t.notOk(eventQueue.saturated(), 'its loop waiting for work most of the next');
});
