import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../../src/config/load-config.js';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { startServer } from '../../../src/server.js';
import { makeTempDir, removeTempDir } from '../../cleanup.js';
import { Child } from '../ipc.js';
import { startRedis, type BenchRedis } from '../redis.js';
import { startLatencyProxy } from './latency-proxy.js';
import { SCALE_FOLDER } from './scale-catalog.js';

/** What {@link measureRegistration} saw. */
export interface RegistrationResult {
  services: number;
  /** From `serve`'s start to `/readyz` 200 with every webhook to create, each admin request `readyLatencyMs` slow. */
  readySeconds: number;
  /** Admin and REST requests until then, per service. */
  readyRequestsPerService: number;
  /** A health pass with every webhook in place (a restarted `serve`'s first), each request `passLatencyMs` slow. */
  passSeconds: number;
  /** Admin and REST requests of that pass, per service. */
  passRequestsPerService: number;
  readyLatencyMs: number;
  passLatencyMs: number;
  /** `registration.concurrency`. */
  concurrency: number;
}

/** Options of {@link measureRegistration}. */
export interface RegistrationSettings {
  services: number;
  readyLatencyMs: number;
  passLatencyMs: number;
  timeoutMs: number;
}

/**
 * A large organization behind a slow admin API: the emulator (its own process) serves `services` feature services
 * through a proxy that holds each request; `serve` (in this process) registers `Scale/*` from its config file.
 * Times its readiness with every webhook to create, then a restarted `serve`'s first pass, a health pass (every
 * webhook in place), from the registration's own measure; counts the requests of each.
 */
export async function measureRegistration(settings: RegistrationSettings): Promise<RegistrationResult> {
  const redis = await startRedis('fast');
  const emulator = await Child.start<{ port: number }>('scale-emulator', 'workers/scale-emulator.js', {
    args: [String(settings.services)],
  });
  let latencyMs = settings.readyLatencyMs;
  let requests = 0;
  const proxy = await startLatencyProxy({
    target: new URL(`http://127.0.0.1:${emulator.ready.port}`),
    delayMs: () => {
      requests += 1;
      return latencyMs;
    },
  });
  const dir = makeTempDir('scale-config');
  try {
    const file = join(dir, 'geohook.json');
    writeFileSync(file, JSON.stringify({ register: [`${SCALE_FOLDER}/*`] }));
    const env = { ADMIN_URL: `${proxy.url.origin}/arcgis/admin`, GEOHOOK_CONFIG: file };
    const first = await readiness(redis, env, settings.timeoutMs);
    const readyRequests = requests;
    latencyMs = settings.passLatencyMs;
    // Let the backfill of the first pass's gaps (idle emulator layers report moving generations) settle.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    requests = 0;
    const second = await readiness(redis, env, settings.timeoutMs);
    return {
      services: settings.services,
      readySeconds: first.seconds,
      readyRequestsPerService: readyRequests / settings.services,
      passSeconds: second.passSeconds,
      passRequestsPerService: requests / settings.services,
      readyLatencyMs: settings.readyLatencyMs,
      passLatencyMs: settings.passLatencyMs,
      concurrency: first.concurrency,
    };
  } finally {
    removeTempDir(dir);
    await proxy.close();
    await emulator.close();
    await redis.stop();
  }
}

/** Starts `serve` with `env`, waits for `/readyz` 200 with every service registered, and stops it. */
async function readiness(
  redis: BenchRedis,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ seconds: number; passSeconds: number; concurrency: number }> {
  const config = loadConfig({
    REDIS_URL: redis.url,
    HOST: '127.0.0.1',
    PORT: String(await findFreePort()),
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'admin.pass',
    HOOK_SECRETS: 'a-scale-key',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const startedAt = Date.now();
  const server = await startServer(config, { logger: pino({ level: 'silent' }) });
  try {
    const deadline = startedAt + timeoutMs;
    for (;;) {
      const ready = await fetch(`${config.publicUrl}/readyz`).then(
        (answer) => answer.status === 200,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`scale: not ready after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = (Date.now() - startedAt) / 1000;
    const summary = server.registration!.summary();
    if (summary.failingCount > 0) throw new Error(`scale: ${summary.failingCount} services not registered: ${summary.failing[0]?.reason}`);
    return { seconds, passSeconds: summary.lastPassSeconds ?? seconds, concurrency: config.registration.concurrency };
  } finally {
    await server.close();
  }
}
