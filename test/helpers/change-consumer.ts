import pino from 'pino';
import type { Test } from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import type { SubmissionEvent } from '../../src/changes/submission-event.js';
import { subscribe } from '../../src/consumers/subscribe.js';

/**
 * Every change event of `prefix` on the Redis at `redisUrl`, as a `subscribe()` consumer gets them, until teardown;
 * the `change.submission` events (asked for by name) into `submissions`, when given.
 */
export async function consumeChanges(t: Test, redisUrl: string, prefix: string, submissions?: SubmissionEvent[]): Promise<ChangeEvent[]> {
  const events: ChangeEvent[] = [];
  const subscription = subscribe({
    connection: redisUrl,
    prefix,
    logger: pino({ level: 'silent' }),
    handlers: {
      'change.*': async (event) => void events.push(event),
      ...(submissions === undefined ? {} : { 'change.submission': async (event: SubmissionEvent) => void submissions.push(event) }),
    },
  });
  t.teardown(() => subscription.close());
  await subscription.ready();
  return events;
}
