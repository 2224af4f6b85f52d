import type { Redis } from 'ioredis';
import { GeohookError } from '../errors.js';

/** `fast`: acknowledged once Redis holds the event in memory (AOF fsync every second); `strict`: once it is on disk. */
export type Durability = 'fast' | 'strict';

/** What a Redis server says of its persistence. */
export interface RedisPersistence {
  /** `redis_version` of INFO server. */
  version: string;
  /** AOF on (`aof_enabled` of INFO persistence). */
  appendOnly: boolean;
  /** `appendfsync`, or `undefined` when CONFIG GET is not allowed (managed Redis). */
  appendFsync: string | undefined;
}

/** How the acknowledgement's write is made durable. */
export interface DurabilityPlan {
  durability: Durability;
  /** Send `WAITAOF 1 0` after each write and acknowledge only once the local AOF has it on disk. */
  waitAof: boolean;
  /** One line for the log: which mechanism, on which server. */
  description: string;
}

/** The first Redis with WAITAOF. */
const WAITAOF_SINCE: readonly [number, number] = [7, 2];

function atLeast(version: string, [major, minor]: readonly [number, number]): boolean {
  const [m = 0, n = 0] = version.split('.').map(Number);
  return m > major || (m === major && n >= minor);
}

/**
 * Decides how `durability` is kept on a server: fast needs nothing; strict uses `WAITAOF` (Redis 7.2 and
 * later, AOF on), else a server that fsyncs every write itself (`appendfsync always`). Throws a
 * `GEOHOOK_ERR_DURABILITY` error naming what to change when strict cannot be kept.
 */
export function planDurability(durability: Durability, server: RedisPersistence): DurabilityPlan {
  const redis = `Redis ${server.version}`;
  if (durability === 'fast') {
    const aof = server.appendOnly ? `AOF on, appendfsync ${server.appendFsync ?? 'unknown'}` : 'AOF off: only its RDB snapshots survive a restart';
    return { durability, waitAof: false, description: `fast: acknowledged once ${redis} holds the event (${aof})` };
  }
  if (server.appendOnly && atLeast(server.version, WAITAOF_SINCE)) {
    return { durability, waitAof: true, description: `strict: acknowledged after WAITAOF confirms the local fsync (${redis})` };
  }
  if (server.appendOnly && server.appendFsync === 'always') {
    return { durability, waitAof: false, description: `strict: ${redis} has no WAITAOF and fsyncs every write itself (appendfsync always)` };
  }
  const found = server.appendOnly ? `appendfsync ${server.appendFsync ?? 'unreadable (CONFIG GET refused)'}` : 'AOF off';
  throw new GeohookError(
    'GEOHOOK_ERR_DURABILITY',
    `DURABILITY=strict cannot be kept on ${redis} (${found}): use Redis 7.2 or later with appendonly yes (WAITAOF), or set appendonly yes and appendfsync always`,
  );
}

/** Reads the server's version and AOF settings (three commands, once per connection). */
export async function readPersistence(connection: Redis): Promise<RedisPersistence> {
  const [server, persistence] = await Promise.all([connection.info('server'), connection.info('persistence')]);
  const field = (info: string, name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const appendFsync = await connection.config('GET', 'appendfsync').then(
    (reply) => (reply as string[])[1],
    () => undefined,
  );
  return { version: field(server, 'redis_version') ?? '0.0.0', appendOnly: field(persistence, 'aof_enabled') === '1', appendFsync };
}
