import pino from 'pino';
import type { Test } from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { subscribe } from '../../src/consumers/subscribe.js';

/** Every change event of `prefix` on the Redis at `redisUrl`, as a `subscribe()` consumer gets them, until teardown. */
export async function consumeChanges(t: Test, redisUrl: string, prefix: string): Promise<ChangeEvent[]> {
  const events: ChangeEvent[] = [];
  const subscription = subscribe({
    connection: redisUrl,
    prefix,
    logger: pino({ level: 'silent' }),
    handlers: { 'change.*': async (event) => void events.push(event) },
  });
  t.teardown(() => subscription.close());
  await subscription.ready();
  return events;
}
