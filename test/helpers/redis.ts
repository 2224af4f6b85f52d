import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { RedisServer } from '../../src/embedded/redis-server.js';

/**
 * A private redis-server on a free loopback port, stopped (and its directory removed) at teardown.
 * No persistence unless the test asks for AOF.
 */
export async function startRedis(t: Test, options: { appendOnly?: boolean; appendFsync?: 'always' | 'everysec' } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-redis-'));
  const server = new RedisServer({ dir, appendOnly: options.appendOnly ?? false, ...(options.appendFsync === undefined ? {} : { appendFsync: options.appendFsync }) });
  await server.start();
  t.teardown(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return server;
}
