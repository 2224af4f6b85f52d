import type { Logger } from 'pino';
import type { StoredEvent } from '../events/envelope.js';
import type { RedisClient } from '../redis/connection.js';
import { relayInboxKey } from '../redis/keys.js';
import type { RelayFanout } from './relay-fanout.js';

/** Removes the first `count` items when the first is still `head`: another receiver may have handled them already. */
const TRIM_HANDLED = `if redis.call('LINDEX', KEYS[1], 0) == ARGV[1] then redis.call('LTRIM', KEYS[1], tonumber(ARGV[2]), -1) return 1 end return 0`;

/** Options of {@link startRelayInbox}. */
export interface RelayInboxOptions {
  connection: RedisClient;
  prefix: string;
  fanout: RelayFanout;
  logger: Logger;
  /** Items handled at once. @defaultValue 500 */
  batch?: number;
  /** The wait after finding the inbox empty, ms. @defaultValue 20 */
  idleMs?: number;
}

/**
 * The fan-out of feature and GP events: the accept script pushes each new event of a relayed family to the relay
 * inbox in the same call that stores it (so no acknowledged event can escape it); this loop adds their relay jobs,
 * then removes them from the inbox. Removed only after their jobs were added, and only if no other receiver did
 * so first: a crash in between adds them again, which their job ids make harmless.
 */
export function startRelayInbox(options: RelayInboxOptions): { close(): Promise<void> } {
  const { connection, fanout, batch = 500, idleMs = 20 } = options;
  const key = relayInboxKey(options.prefix);
  const log = options.logger.child({ component: 'relay-inbox' });
  let closed = false;
  const step = async (): Promise<boolean> => {
    const items = await connection.lrange(key, 0, batch - 1);
    if (items.length === 0) return false;
    const events = items.flatMap((item): StoredEvent[] => {
      try {
        return [JSON.parse(item) as StoredEvent];
      } catch (err) {
        log.error({ err }, 'relay inbox: an item that is no event, dropped');
        return [];
      }
    });
    await fanout.add(events);
    await connection.eval(TRIM_HANDLED, 1, key, items[0]!, items.length);
    return true;
  };
  const loop = (async () => {
    while (!closed) {
      const busy = await step().catch((err: unknown) => {
        log.warn({ err }, 'relay inbox not read: retrying');
        return false;
      });
      if (!busy && !closed) await new Promise((resolve) => setTimeout(resolve, idleMs).unref());
    }
  })();
  return {
    async close() {
      closed = true;
      await loop;
    },
  };
}
