import type { Test } from 'tap';
import type { Webhook } from '../../src/arcgis/webhook.js';
import { loadConfig } from '../../src/config/load-config.js';
import { findFreePort, type RedisServer } from '../../src/embedded/redis-server.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { TestEmulator } from './emulator.js';
import { capturingLogger } from './log-capture.js';

export interface TestGeohook {
  server: RunningServer;
  /** `http://127.0.0.1:<port>` of this receiver. */
  url: string;
  port: number;
  /** Every log line so far. */
  log: () => string;
  /** `GET /readyz`: status and reason. */
  readyz(): Promise<{ status: number; reason?: string }>;
  /** Stops it now (teardown does nothing more). */
  stop(): Promise<void>;
}

/**
 * `startServer` as `geohook serve` runs it, against `redis`, logging at debug into memory, on `env.PORT`
 * or a free loopback port; stopped at teardown.
 */
export async function startGeohook(t: Test, redis: RedisServer, env: Record<string, string>): Promise<TestGeohook> {
  const port = env.PORT === undefined ? await findFreePort() : Number(env.PORT);
  const config = loadConfig({ REDIS_URL: redis.url, HOST: '127.0.0.1', LOG_LEVEL: 'debug', ...env, PORT: String(port) });
  const { logger, lines } = capturingLogger('debug');
  const server = await startServer(config, { logger });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await server.close();
  };
  t.teardown(stop);
  const url = `http://127.0.0.1:${port}`;
  return {
    server,
    url,
    port,
    log: () => lines.join('\n'),
    async readyz() {
      const response = await fetch(`${url}/readyz`);
      const body = (await response.json()) as { reason?: string };
      return { status: response.status, ...(body.reason === undefined ? {} : { reason: body.reason }) };
    },
    stop,
  };
}

/** Every webhook the emulator holds for `folder/name.Type` (through the admin list endpoint). */
export async function webhooksOf(emulator: TestEmulator, service: string): Promise<Webhook[]> {
  const answer = await emulator.admin(`services/${service}/webhooks`, { num: '100' });
  return answer.webhooks as Webhook[];
}

/** The environment that registers the `default` hook on `services` in `emulator`. */
export function registrationEnv(emulator: TestEmulator, services: string[], prefix: string): Record<string, string> {
  return {
    ADMIN_URL: emulator.baseUrl,
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'admin.pass',
    REGISTER: services.join(','),
    GEOHOOK_PREFIX: prefix,
  };
}
