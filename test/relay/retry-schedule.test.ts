import type { WorkerOptions } from 'bullmq';
import t from 'tap';
import { GeohookError, RelayDeliveryError } from '../../src/errors.js';
import { createRelayBackoff, relayAttempts, scheduleFromPolicy, STANDARD_WEBHOOKS_SCHEDULE_MS } from '../../src/relay/retry-schedule.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

t.test('without jitter the waits are 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 tries', async (t) => {
  const backoff = createRelayBackoff({ jitter: 0 });
  t.same(
    [1, 2, 3, 4, 5, 6, 7].map((attemptsMade) => backoff(attemptsMade)),
    [5000, 5 * MIN, 30 * MIN, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
  );
  t.equal(relayAttempts(), 8);
  t.equal(backoff(12), 10 * HOUR, 'past the schedule, its last wait');
});

t.test('jitter draws each wait within ±20 %, around the schedule', async (t) => {
  t.equal(createRelayBackoff({ random: () => 0 })(1), 4000);
  t.equal(createRelayBackoff({ random: () => 0.5 })(1), 5000);
  t.equal(createRelayBackoff({ random: () => 0.999999 })(2), Math.round(5 * MIN * (1 + 0.2 * (2 * 0.999999 - 1))));
  const waits = Array.from({ length: 200 }, () => createRelayBackoff()(3));
  t.ok(
    waits.every((wait) => wait >= 24 * MIN && wait <= 36 * MIN),
    'every 30-min wait within 24 and 36 min',
  );
  t.ok(new Set(waits).size > 100, 'and spread');
});

t.test('a configured schedule and jitter', async (t) => {
  const backoff = createRelayBackoff({ scheduleMs: [10, 20], jitter: 0.5, random: () => 1 });
  t.same([backoff(1), backoff(2), backoff(3)], [15, 30, 30]);
  t.equal(relayAttempts([10, 20]), 3);
});

t.test("a route's Retry-After longer than the wait is kept; a shorter one is not", async (t) => {
  const backoff = createRelayBackoff({ jitter: 0 });
  t.equal(backoff(1, 'custom', new RelayDeliveryError('answered 429', { status: 429, retryAfterMs: 90_000 })), 90_000);
  t.equal(backoff(2, 'custom', new RelayDeliveryError('answered 503', { status: 503, retryAfterMs: 1000 })), 5 * MIN);
  t.equal(backoff(1, 'custom', new Error('not a delivery')), 5000);
});

t.test('a schedule from the shape of the top-level retry: doubling or fixed', async (t) => {
  t.same(scheduleFromPolicy({ attempts: 4, backoff: { type: 'exponential', delayMs: 1000 } }), [1000, 2000, 4000]);
  t.same(scheduleFromPolicy({ attempts: 3, backoff: { type: 'fixed', delayMs: 500 } }), [500, 500]);
  t.same(scheduleFromPolicy({ attempts: 1, backoff: { type: 'fixed', delayMs: 500 } }), []);
});

t.test('an empty schedule, a negative wait or a jitter outside 0 to 1 is a configuration error', async (t) => {
  for (const options of [{ scheduleMs: [] }, { scheduleMs: [1000, -1] }, { scheduleMs: [Number.NaN] }, { jitter: 1.5 }, { jitter: -0.1 }]) {
    let code: string | undefined;
    try {
      createRelayBackoff(options);
    } catch (err) {
      code = err instanceof GeohookError ? err.code : 'not a GeohookError';
    }
    t.equal(code, 'GEOHOOK_ERR_CONFIG', JSON.stringify(options));
  }
});

t.test("the backoff is a BullMQ worker's backoffStrategy, and the default schedule is frozen", async (t) => {
  const settings: WorkerOptions['settings'] = { backoffStrategy: createRelayBackoff() };
  t.type(settings.backoffStrategy, 'function');
  t.ok(Object.isFrozen(STANDARD_WEBHOOKS_SCHEDULE_MS));
});
