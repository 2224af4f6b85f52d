import t from 'tap';
import { LagTrend } from '../../src/fanout/lag-trend.js';

t.test('a fan-out whose lag holds is not outpaced, however full its reads; one whose lag rises with the time is', async (t) => {
  const trend = new LagTrend();
  // Reads every 10 ms, each oldest entry 30 ms old: a steady rate handed over as it comes.
  for (let atMs = 0; atMs <= 1000; atMs += 10) t.notOk(trend.note(atMs, atMs - 30 - (atMs % 20)), `${atMs} ms: keeping up`);
  // The log outpaces it: the oldest entry each read finds moves on at a third of the time's pace.
  let growing = false;
  for (let atMs = 1010; atMs <= 1300; atMs += 10) growing = trend.note(atMs, 970 + (atMs - 1000) / 3);
  t.ok(growing, 'its lag rose by two thirds of the time: the log grows');
  // Then it catches up: the lag falls.
  for (let atMs = 1310; atMs <= 1600; atMs += 10) growing = trend.note(atMs, atMs - 20);
  t.notOk(growing, 'caught up');
});

t.test('the verdict waits for a whole window: a rise within it is not yet a trend', async (t) => {
  const trend = new LagTrend({ windowMs: 250 });
  t.notOk(trend.note(0, 0), 'the first read: no trend yet');
  t.notOk(trend.note(200, 0), 'lag 200 ms after 200 ms, but within the window');
  t.ok(trend.note(250, 0), 'a whole window: the lag rose with the time');
  t.ok(trend.note(400, 400), 'the verdict holds until the next window ends');
  t.notOk(trend.note(500, 480), 'a window whose lag fell');
});
