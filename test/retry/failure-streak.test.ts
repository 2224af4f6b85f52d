import t from 'tap';
import { backoffMs, FailureStreak } from '../../src/retry/failure-streak.js';
import { capturingLogger } from '../helpers/log-capture.js';

t.test('the backoff doubles from the first wait up to the longest', async (t) => {
  t.same(
    [0, 1, 2, 5, 6, 7].map((failures) => backoffMs(failures)),
    [1000, 2000, 4000, 32_000, 60_000, 60_000],
  );
  t.same(
    [0, 1, 2].map((failures) => backoffMs(failures, { initialMs: 50, maxMs: 100 })),
    [50, 100, 100],
  );
});

t.test('a cause is said once, then at most once a minute while it stays; a new cause and the recovery at once', async (t) => {
  const { logger, lines } = capturingLogger('info');
  let now = Date.parse('2026-11-28T12:00:00Z');
  const streak = new FailureStreak({
    logger,
    subject: 'checks',
    failingMessage: 'not working: retrying',
    recoveredMessage: 'working again',
    now: () => now,
  });
  const said = () => lines.splice(0).map((line) => JSON.parse(line) as Record<string, unknown>);

  const waits: number[] = [];
  for (let tries = 0; tries < 7; tries += 1) {
    waits.push(streak.failed('the server is away'));
    now += waits.at(-1)!;
  }
  t.same(waits, [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000], 'each wait doubles');
  t.match(said(), [
    { level: 40, msg: 'not working: retrying', failed: 'the server is away', retryInMs: 1000 },
    // 63 s after the first: tries 1 to 6 fell within the minute.
    {
      level: 40,
      msg: 'checks still failing, same cause (7 tries since 2026-11-28T12:00:00.000Z): retrying',
      tries: 7,
      since: '2026-11-28T12:00:00.000Z',
      retryInMs: 60_000,
    },
  ]);
  t.equal(streak.cause, 'the server is away');

  streak.failed('the password is refused', { detail: 1 });
  t.match(said(), [{ msg: 'not working: retrying', failed: 'the password is refused', detail: 1, retryInMs: 60_000 }]);
  streak.succeeded();
  t.match(said(), [{ level: 30, msg: 'working again', tries: 8 }]);
  t.equal(streak.cause, undefined);
  t.equal(streak.failures, 0);
  streak.succeeded();
  t.same(said(), [], 'a success after a success says nothing');
  t.equal(streak.failed('the server is away'), 1000, 'a new streak starts from the first wait');
});
