import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { RedisServer } from '../../src/embedded/redis-server.js';
import type { ReceiverOptions } from '../../src/receiver/build-receiver.js';

export const TEST_KEY = 'geohook-test-key';

/** A BullMQ prefix no other test uses. */
export function uniquePrefix(): string {
  return `t${randomUUID().slice(0, 8)}`;
}

export interface TestReceiver {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` of the listening receiver. */
  url: string;
  prefix: string;
  /** POSTs `body` to `/webhooks/<hook>` over real HTTP. */
  post(body: Buffer | string, headers?: Record<string, string>, hook?: string): Promise<Response>;
}

/**
 * Builds and starts a receiver on a free loopback port against `redis`, with a unique prefix and
 * `HOOK_SECRETS=geohook-test-key` unless `env` says otherwise; closed at teardown.
 */
export async function startReceiver(
  t: Test,
  redis: Pick<RedisServer, 'url'>,
  env: Record<string, string> = {},
  options: Omit<ReceiverOptions, 'config'> = {},
): Promise<TestReceiver> {
  const config = loadConfig({
    REDIS_URL: redis.url,
    GEOHOOK_PREFIX: uniquePrefix(),
    HOOK_SECRETS: TEST_KEY,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const app = await buildApp({ config, ...options });
  await app.eventQueue.ready();
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  return {
    app,
    url,
    prefix: config.prefix,
    post: (body, headers = {}, hook = 'default') =>
      fetch(`${url}/webhooks/${hook}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      }),
  };
}

/** Jobs in every state across the three queues. */
export async function countJobs(app: FastifyInstance): Promise<number> {
  let total = 0;
  for (const name of ['gp-events', 'feature-events', 'unknown-events'] as const) {
    const counts = await app.eventQueue.queue(name).getJobCounts();
    total += Object.values(counts).reduce((sum, n) => sum + n, 0);
  }
  return total;
}

/** Writes a GEOHOOK_CONFIG file in the test's directory and returns its path. */
export function configFile(t: Test, content: unknown): string {
  const dir = t.testdir({ 'geohook.json': JSON.stringify(content) });
  return `${dir}/geohook.json`;
}
