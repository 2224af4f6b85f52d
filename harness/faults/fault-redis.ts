import { join } from 'node:path';
import { RedisServer } from '../../src/embedded/redis-server.js';
import { onCleanup } from '../cleanup.js';

/** `fast`: AOF fsync every second; `strict`: at every write (what DURABILITY=strict needs on Redis < 7.2). */
export type Durability = 'fast' | 'strict';

/**
 * A private redis-server for one scenario, AOF on, in `<dir>/redis` on a free port; never the shared Redis
 * on 6379. It can be killed (SIGKILL: what is not fsync'd is gone), stopped (SIGTERM: flushed) and started
 * again on the same port and directory.
 */
export class FaultRedis {
  readonly durability: Durability;
  private readonly server: RedisServer;
  private readonly unregister: () => void;

  private constructor(server: RedisServer, durability: Durability) {
    this.server = server;
    this.durability = durability;
    this.unregister = onCleanup(() => this.server.kill());
  }

  /** Starts a fresh server whose files live under `dir`. */
  static async start(dir: string, durability: Durability): Promise<FaultRedis> {
    const server = new RedisServer({
      dir: join(dir, 'redis'),
      appendOnly: true,
      appendFsync: durability === 'strict' ? 'always' : 'everysec',
    });
    await server.start();
    return new FaultRedis(server, durability);
  }

  get url(): string {
    return this.server.url;
  }

  /** Kills the server as a crash would. */
  kill(): Promise<void> {
    return this.server.kill();
  }

  /** Stops the server cleanly (it flushes its AOF). */
  stop(): Promise<void> {
    return this.server.stop();
  }

  /** Starts the server again on the same port, from the same files. */
  restart(): Promise<void> {
    return this.server.start();
  }

  /** Stops the server for good. */
  async close(): Promise<void> {
    this.unregister();
    await this.server.stop();
  }
}
