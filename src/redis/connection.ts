import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { ioredis } from '../commonjs/ioredis.js';
import { ConfigError } from '../errors.js';

/** A connection to a single Redis (standalone or found through Sentinel) or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** ioredis connection options, as its constructors take them. */
export type ConnectionOptions = RedisOptions;

/** A node of a Redis Cluster to discover the others from. */
export interface ClusterSeed {
  readonly host: string;
  readonly port: number;
}

/**
 * Where Redis is and how to connect to it: REDIS_URL (or the embedded server's URL) plus the `redis`
 * section of GEOHOOK_CONFIG. Each role (producer, worker, blocking reader) adds its own retry options.
 */
export interface RedisTarget {
  /**
   * A `redis://` or `rediss://` URL. With Sentinel only its credentials and database count (the master is
   * asked of the sentinels); with a Cluster it is the seed when `cluster.nodes` is empty.
   */
  readonly url?: string | undefined;
  /** ioredis connection options (credentials, TLS, `sentinels` and `name` for Sentinel), for every node. */
  readonly options?: Readonly<ConnectionOptions> | undefined;
  /** Set for a Redis Cluster: its seed nodes and the ioredis cluster options. */
  readonly cluster?:
    | {
        readonly nodes: readonly ClusterSeed[];
        readonly options?: Readonly<ClusterOptions> | undefined;
      }
    | undefined;
}

/** The target of a plain URL. */
export function urlTarget(url: string): RedisTarget {
  return { url };
}

/** `host` and `port` of a `redis://` URL, the seed of a cluster. */
function seedOf(url: string): ClusterSeed {
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: parsed.port === '' ? 6379 : Number(parsed.port) };
}

/** The credentials, database and TLS of a URL as ioredis options (for the nodes of a cluster). */
function urlCredentials(url: string): ConnectionOptions {
  const parsed = new URL(url);
  return {
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * Opens a connection to `target` with the role's `roleOptions` (retries, offline queue…) over the user's
 * options. A Cluster gets them as the options of every node; its own offline queue follows the role's.
 */
export function connectRedis(target: RedisTarget, roleOptions: ConnectionOptions = {}): RedisClient {
  const { url, options = {}, cluster } = target;
  if (cluster !== undefined) {
    const nodes = cluster.nodes.length > 0 ? [...cluster.nodes] : url === undefined ? [] : [seedOf(url)];
    if (nodes.length === 0) throw new ConfigError('GEOHOOK_CONFIG at redis.cluster.nodes: at least one node, or REDIS_URL as the seed');
    const { enableOfflineQueue, retryStrategy, lazyConnect, ...nodeRoleOptions } = roleOptions;
    const clusterOptions: ClusterOptions = {
      ...cluster.options,
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      ...(lazyConnect === undefined ? {} : { lazyConnect }),
      ...(retryStrategy === undefined ? {} : { clusterRetryStrategy: retryStrategy }),
      redisOptions: { ...(url === undefined ? {} : urlCredentials(url)), ...options, ...cluster.options?.redisOptions, ...nodeRoleOptions },
    };
    return new ioredis.Cluster(nodes, clusterOptions);
  }
  if (url === undefined && options.sentinels === undefined) {
    throw new ConfigError('REDIS_URL: not set (a redis:// URL, or sentinels in GEOHOOK_CONFIG at redis.options)');
  }
  return url === undefined ? new ioredis.Redis({ ...options, ...roleOptions }) : new ioredis.Redis(url, { ...options, ...roleOptions });
}

/** A second connection to the same Redis, with `override` (e.g. for blocking reads). */
export function duplicateConnection(connection: RedisClient, override: ConnectionOptions): RedisClient {
  if (connection instanceof ioredis.Cluster) {
    const { enableOfflineQueue, ...nodeOptions } = override;
    return connection.duplicate([], { ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }), redisOptions: nodeOptions });
  }
  return connection.duplicate(override);
}

/** The masters behind `connection`: the connection itself, or every master of a cluster. */
export function masterNodes(connection: RedisClient): Redis[] {
  return connection instanceof ioredis.Cluster ? connection.nodes('master') : [connection];
}

/**
 * A producer connection fails fast: commands issued while Redis is unreachable reject at once instead of
 * waiting in ioredis' offline queue, so a delivery can be answered 503 within the enqueue timeout.
 */
export function createProducerConnection(url: string, options?: ConnectionOptions): Redis;
export function createProducerConnection(target: RedisTarget, options?: ConnectionOptions): RedisClient;
export function createProducerConnection(target: string | RedisTarget, options: ConnectionOptions = {}): RedisClient {
  return connectRedis(typeof target === 'string' ? urlTarget(target) : target, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    ...options,
  });
}

/** What {@link configuredTarget} reads of geohook's configuration. */
export interface RedisConfig {
  readonly redisUrl: string | undefined;
  readonly redis: { readonly options: Readonly<ConnectionOptions>; readonly cluster: RedisTarget['cluster'] };
}

/** True when the configuration names a Redis (REDIS_URL, sentinels or a cluster): no embedded server then. */
export function hasConfiguredRedis(config: RedisConfig): boolean {
  return config.redisUrl !== undefined || config.redis.options.sentinels !== undefined || config.redis.cluster !== undefined;
}

/** The Redis of `config`, with `fallbackUrl` (the embedded server's) when it names none. */
export function configuredTarget(config: RedisConfig, fallbackUrl?: string): RedisTarget {
  return { url: config.redisUrl ?? fallbackUrl, options: config.redis.options, cluster: config.redis.cluster };
}

/** Where `target` is, for messages and logs, without credentials. */
export function describeTarget(target: RedisTarget): string {
  if (target.cluster !== undefined) {
    const nodes = target.cluster.nodes.length > 0 ? target.cluster.nodes.map(({ host, port }) => `${host}:${port}`) : [hostOf(target.url)];
    return `the cluster at ${nodes.join(',')}`;
  }
  if (target.options?.sentinels !== undefined)
    return `master ${target.options.name ?? '?'} of sentinels ${target.options.sentinels.map(({ host, port }) => `${host}:${port}`).join(',')}`;
  return hostOf(target.url);
}

/** The host (and port) of a Redis URL, without its credentials. */
function hostOf(url: string | undefined): string {
  try {
    return new URL(url ?? '').host;
  } catch {
    return 'REDIS_URL';
  }
}
