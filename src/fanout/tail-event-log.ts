import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connection.js';
import { eventLogKey } from '../redis/keys.js';
import type { RoutedEvent } from './routed-event.js';

/** Options of {@link tailEventLog}. */
export interface TailOptions {
  /** A connection of its own (it blocks on the log), made with `maxRetriesPerRequest: null`; the caller closes it. */
  connection: RedisClient;
  prefix: string;
  /** Called with each event stored from now on, in the log's order. */
  onEvent: (event: RoutedEvent) => void;
  logger: Logger;
}

/**
 * Shows every event stored from now on without taking it from any queue (what `geohook up` prints): it follows the
 * event log, so the workers of the family queues and of the subscriptions still get every event. A reader that
 * falls further behind than the log's retention misses what was trimmed meanwhile.
 */
export function tailEventLog(options: TailOptions): { ready: Promise<void>; close(): Promise<void> } {
  const { connection, onEvent } = options;
  const key = eventLogKey(options.prefix);
  let closed = false;
  let stop = (): void => undefined;
  const stopped = new Promise<null>((resolve) => (stop = () => resolve(null)));
  // Where it starts: after the log's last entry when it was called.
  const start = connection.xrevrange(key, '+', '-', 'COUNT', 1).then(
    (entries) => entries[0]?.[0] ?? '0-0',
    // Redis not answering yet: from the first entry stored once it does.
    () => '$',
  );
  const loop = (async () => {
    // Closing before Redis ever answered ends the wait for where to start.
    const from = await Promise.race([start, stopped]);
    if (from === null) return;
    let last = from;
    while (!closed) {
      const reading = connection.xread('COUNT', 500, 'BLOCK', 250, 'STREAMS', key, last);
      // Closing ends the wait at once (the caller then disconnects, which ends the read).
      const read = await Promise.race([reading, stopped]).catch((err: unknown) => {
        options.logger.debug({ err }, 'event log not read: retrying');
        return new Promise<null>((resolve) => setTimeout(() => resolve(null), 250));
      });
      for (const [id, fields] of read?.[0]?.[1] ?? []) {
        last = id;
        const data = fields.find((_, index) => index % 2 === 1 && fields[index - 1] === 'd');
        try {
          if (data !== undefined) onEvent(JSON.parse(data) as RoutedEvent);
        } catch (err) {
          options.logger.warn({ err, entry: id }, 'event log: an entry that is no event, passed over');
        }
      }
    }
  })();
  return {
    /** Resolves once it knows where the log ends: every event stored after that is shown. */
    ready: start.then(() => undefined),
    async close() {
      closed = true;
      stop();
      await loop;
    },
  };
}
