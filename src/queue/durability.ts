import type { Redis } from 'ioredis';
import { ioredis } from '../commonjs/ioredis.js';
import { GeohookError } from '../errors.js';
import { masterNodes, type RedisClient } from '../redis/connection.js';

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
  /**
   * A Redis Cluster, described by its weakest master. WAITAOF is not used there: a keyless command is sent
   * to any node, not necessarily the one that took the write.
   */
  cluster?: boolean;
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

/** The persistence two servers both guarantee: the older version, AOF only if both, `always` only if both. */
function weakest(a: RedisPersistence, b: RedisPersistence): RedisPersistence {
  const [major = 0, minor = 0] = b.version.split('.').map(Number);
  return {
    version: atLeast(a.version, [major, minor]) ? b.version : a.version,
    appendOnly: a.appendOnly && b.appendOnly,
    appendFsync: a.appendFsync === 'always' ? b.appendFsync : a.appendFsync,
  };
}

/**
 * Decides how `durability` is kept on a server: fast needs nothing; strict uses `WAITAOF` (Redis 7.2 and
 * later, AOF on), else a server that fsyncs every write itself (`appendfsync always`). Throws a
 * `GEOHOOK_ERR_DURABILITY` error naming what to change when strict cannot be kept.
 */
export function planDurability(durability: Durability, server: RedisPersistence): DurabilityPlan {
  const redis = `Redis ${server.version}`;
  if (durability === 'fast') {
    const aof = server.appendOnly
      ? `AOF on, appendfsync ${server.appendFsync ?? 'unknown'}`
      : 'AOF off: only its RDB snapshots survive a restart';
    return { durability, waitAof: false, description: `fast: acknowledged once ${redis} holds the event (${aof})` };
  }
  if (server.appendOnly && server.cluster !== true && atLeast(server.version, WAITAOF_SINCE)) {
    return { durability, waitAof: true, description: `strict: acknowledged after WAITAOF confirms the local fsync (${redis})` };
  }
  if (server.appendOnly && server.appendFsync === 'always') {
    return {
      durability,
      waitAof: false,
      description: `strict: ${redis} has no WAITAOF and fsyncs every write itself (appendfsync always)`,
    };
  }
  const found = server.appendOnly ? `appendfsync ${server.appendFsync ?? 'unreadable (CONFIG GET refused)'}` : 'AOF off';
  const fix =
    server.cluster === true
      ? 'set appendonly yes and appendfsync always on every master of the cluster'
      : 'use Redis 7.2 or later with appendonly yes (WAITAOF), or set appendonly yes and appendfsync always';
  throw new GeohookError(
    'GEOHOOK_ERR_DURABILITY',
    `DURABILITY=strict cannot be kept on ${redis}${server.cluster === true ? ' (a cluster master)' : ''} (${found}): ${fix}`,
  );
}

/**
 * Reads the server's version and AOF settings (three commands, once per connection); of a cluster, those
 * every master guarantees.
 */
export async function readPersistence(connection: RedisClient): Promise<RedisPersistence> {
  const servers = await Promise.all(masterNodes(connection).map(readServerPersistence));
  if (servers.length === 0) throw new Error('no Redis Cluster master is known yet');
  return { ...servers.reduce(weakest), ...(connection instanceof ioredis.Cluster ? { cluster: true } : {}) };
}

async function readServerPersistence(connection: Redis): Promise<RedisPersistence> {
  const [server, persistence] = await Promise.all([connection.info('server'), connection.info('persistence')]);
  const field = (info: string, name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const appendFsync = await connection.config('GET', 'appendfsync').then(
    (reply) => (reply as string[])[1],
    () => undefined,
  );
  return { version: field(server, 'redis_version') ?? '0.0.0', appendOnly: field(persistence, 'aof_enabled') === '1', appendFsync };
}
