import { Redis } from 'ioredis';
import pino from 'pino';
import type { Test } from 'tap';
import { startFanout, type FanoutOptions } from '../../src/fanout/start-fanout.js';

const silent = pino({ level: 'silent' });

/**
 * A fan-out on `prefix` of the Redis at `redisUrl`, on a connection of its own, closed at teardown or before (the
 * fan-out before its connection). Defaults: no route, a minute's retention, silent.
 */
export function fanOut(t: Test, redisUrl: string, prefix: string, options: Partial<FanoutOptions> = {}): { close(): Promise<void> } {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const fanout = startFanout({ connection, prefix, routes: [], retentionMs: 60_000, logger: silent, ...options });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await fanout.close();
    connection.disconnect();
  };
  t.teardown(close);
  return { close };
}
