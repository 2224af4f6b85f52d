import type { RedisClient } from '../redis/connection.js';
import { pingsKey } from '../redis/keys.js';

/** When each hook last received ArcGIS Online's test ping: the hash `<prefix>:pings`, hook name → epoch milliseconds. */
export class PingLog {
  private readonly connection: RedisClient;
  private readonly key: string;

  constructor(connection: RedisClient, prefix: string) {
    this.connection = connection;
    this.key = pingsKey(prefix);
  }

  /** Records a ping of `hook` at `at` (epoch ms). */
  async record(hook: string, at: number): Promise<void> {
    await this.connection.hset(this.key, hook, String(at));
  }

  /** The last ping of every hook that received one, epoch ms by hook name. */
  async lastPings(): Promise<Record<string, number>> {
    const stored = await this.connection.hgetall(this.key);
    return Object.fromEntries(Object.entries(stored).map(([hook, at]) => [hook, Number(at)]));
  }
}
