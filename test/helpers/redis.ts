import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { Test } from 'tap';
import { findFreePort, RedisServer, type RedisServerOptions } from '../../src/embedded/redis-server.js';
import { killWithThisProcess } from './parent-watchdog.js';
import { waitFor } from './wait.js';

/** A {@link RedisServer} that never outlives the test process, even SIGKILLed: see {@link killWithThisProcess}. */
class TestRedisServer extends RedisServer {
  private release: (() => void) | undefined;

  override async start(): Promise<void> {
    await super.start();
    if (this.release === undefined && this.pid !== undefined) this.release = killWithThisProcess(this.pid);
  }

  override async stop(): Promise<void> {
    this.unwatch();
    await super.stop();
  }

  override async kill(): Promise<void> {
    this.unwatch();
    await super.kill();
  }

  private unwatch(): void {
    this.release?.();
    this.release = undefined;
  }
}

/**
 * A redis-server in a fresh temporary directory, stopped (and the directory removed) at teardown. Without a
 * password unless asked: the replicas, sentinels and cluster nodes of the tests reach each other without one.
 */
async function startServer(t: Test, options: Omit<RedisServerOptions, 'dir'>): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-redis-'));
  const server = new TestRedisServer({ dir, requirePassword: false, ...options });
  await server.start();
  t.teardown(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return server;
}

/**
 * A private redis-server on a free loopback port, stopped (and its directory removed) at teardown.
 * No persistence unless the test asks for AOF; no password unless it asks for one (as `geohook up`'s has).
 */
export async function startRedis(
  t: Test,
  options: { appendOnly?: boolean; appendFsync?: 'always' | 'everysec'; requirePassword?: boolean } = {},
): Promise<RedisServer> {
  return startServer(t, {
    appendOnly: options.appendOnly ?? false,
    requirePassword: options.requirePassword ?? false,
    ...(options.appendFsync === undefined ? {} : { appendFsync: options.appendFsync }),
  });
}

/** A local Redis Cluster. */
export interface RedisCluster {
  /** `redis://` URL of its first node, a seed for REDIS_URL. */
  readonly url: string;
  readonly nodes: readonly RedisServer[];
}

/**
 * A real Redis Cluster of `masters` redis-servers (and `replicasPerMaster` replicas of each) on free
 * loopback ports (cluster bus on other free ports), its 16,384 slots shared by `redis-cli --cluster
 * create`; stopped at teardown.
 */
export async function startRedisCluster(
  t: Test,
  options: { masters?: number; replicasPerMaster?: number; nodeTimeoutMs?: number } = {},
): Promise<RedisCluster> {
  const { masters = 3, replicasPerMaster = 0, nodeTimeoutMs = 5000 } = options;
  const nodes: RedisServer[] = [];
  for (let index = 0; index < masters * (1 + replicasPerMaster); index += 1) {
    const busPort = await findFreePort();
    nodes.push(
      await startServer(t, {
        extraArgs: ['--cluster-enabled', 'yes', '--cluster-port', String(busPort), '--cluster-node-timeout', String(nodeTimeoutMs)],
      }),
    );
  }
  const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
  await promisify(execFile)(
    'redis-cli',
    ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'],
    { timeout: 30_000 },
  );
  // Every node must know every slot's owner before a client can rely on any of them.
  for (const node of nodes) {
    const client = new Redis(node.url, { lazyConnect: true });
    try {
      await waitFor(
        `cluster node ${node.url} to report cluster_state:ok`,
        async () => /cluster_state:ok/.test(String(await client.cluster('INFO'))),
        { intervalMs: 100 },
      );
    } finally {
      client.disconnect();
    }
  }
  return { url: nodes[0]!.url, nodes };
}

/**
 * A Redis Sentinel on a free loopback port watching `master` under `name` (quorum 1), stopped at teardown.
 * Failover options are short so that a test can wait for one.
 */
export async function startSentinel(t: Test, master: RedisServer, name = 'mymaster'): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-sentinel-'));
  const configFile = join(dir, 'sentinel.conf');
  writeFileSync(
    configFile,
    [
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 10000`,
      '',
    ].join('\n'),
  );
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return startServer(t, { configFile, extraArgs: ['--sentinel'] });
}

/** A redis-server replicating `master`, stopped at teardown. */
export async function startReplica(t: Test, master: RedisServer): Promise<RedisServer> {
  return startServer(t, { extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
}
