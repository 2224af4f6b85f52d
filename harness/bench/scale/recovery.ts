import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { buildEmulator } from '../../../src/emulator/build-emulator.js';
import { upstreamKey } from '../../../src/redis/keys.js';
import { onCleanup } from '../../cleanup.js';
import { emulatorAdminEnv } from '../../emulator-control.js';
import { monitorRedis } from '../../redis-monitor.js';
import { startRedis } from '../redis.js';
import { startLatencyProxy } from './latency-proxy.js';
import { scaleCatalog } from './scale-catalog.js';

/** What {@link measureRecovery} found. */
export interface RecoveryResult {
  /** From the second start of `geohook serve` until every service has `recoveredAt`. */
  recoverySeconds: number;
  /**
   * Redis commands geohook sent meanwhile, per service, as MONITOR sees them: one per script call, the commands
   * scripts run left out (this measure's own polls too).
   */
  recoveryRedisOps: number;
  /** Every command Redis processed meanwhile, per service: those scripts run included (BullMQ's, the accept script's). */
  recoveryRedisCommandsTotal: number;
  services: number;
}

/** Options of {@link measureRecovery}. */
export interface RecoveryOptions {
  /** Feature services registered, each of whose webhook the server deactivates. */
  services: number;
  /** What each `extractChanges` request waits before the emulator sees it (through {@link startLatencyProxy}). */
  extractDelayMs: number;
  /** Longest wait for each phase (ready, deactivated, recovered). @defaultValue 600000 */
  timeoutMs?: number;
}

/** The built CLI (`npm run build`). */
const CLI = fileURLToPath(new URL('../../../../dist/cli.js', import.meta.url));
const PREFIX = 'geohook';

async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check().catch(() => undefined);
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`recovery: timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** `node dist/cli.js serve` with `env` (and PATH, HOME); `stop` ends it with SIGTERM and waits. */
function serve(env: Record<string, string>): { stop(): Promise<void> } {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: 'ignore',
  });
  const exited = once(child, 'exit');
  const stop = async (): Promise<void> => {
    unregister();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const unregister = onCleanup(stop);
  return { stop };
}

/** Redis's count of commands processed so far. */
async function commandsProcessed(redis: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1]);
}

/**
 * Every webhook of an organization deactivated while geohook was down, then one restart (the scale study's
 * experiment 5): `services` feature services registered by `geohook serve` against the emulator, serve stopped,
 * the delivery settings made to deactivate a webhook at its first failure, one edit per service, serve started
 * again with every `extractChanges` delayed `extractDelayMs`. Measures the time until every service has
 * `recoveredAt` in `<prefix>:upstream`, and the Redis commands processed meanwhile, per service.
 */
export async function measureRecovery(options: RecoveryOptions): Promise<RecoveryResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const { services: count, extractDelayMs, timeoutMs = 600_000 } = options;
  const catalog = scaleCatalog(count);
  const names = catalog.map((service) => service.serviceName);
  const redis = await startRedis('fast');
  const emulatorPort = await findFreePort();
  const proxy = await startLatencyProxy({
    target: new URL(`http://127.0.0.1:${emulatorPort}`),
    delayMs: (req) => (req.url?.includes('/extractChanges') === true ? extractDelayMs : 0),
  });
  const root = proxy.url.href.replace(/\/$/, '');
  const emulator = await buildEmulator({ logLevel: 'error', catalog, publicUrl: root });
  const reader = new Redis(redis.url);
  let running: { stop(): Promise<void> } | undefined;
  try {
    await emulator.listen({ host: '127.0.0.1', port: emulatorPort });
    const port = await findFreePort();
    const env = {
      REDIS_URL: redis.url,
      GEOHOOK_PREFIX: PREFIX,
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...emulatorAdminEnv(root),
      REGISTER: names.map((name) => `Scale/${name}.FeatureServer`).join(','),
      LOG_LEVEL: 'warn',
    };
    const ready = async (): Promise<true | undefined> =>
      (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined;
    running = serve(env);
    await until('the first registration', timeoutMs, ready);
    await running.stop();
    running = undefined;

    const token = (await (
      await fetch(`${root}/arcgis/sharing/rest/generateToken`, {
        method: 'POST',
        body: new URLSearchParams({ username: 'orgadmin', password: 'orgadmin.pass', f: 'json' }),
      })
    ).json()) as { token: string };
    const settings = new URLSearchParams({ token: token.token, f: 'json', notificationAttempts: '1', numberOfFailures: '1' });
    await (await fetch(`${root}/arcgis/admin/services/webhooks/settings`, { method: 'POST', body: settings })).text();
    for (const name of names) {
      const edit = await fetch(`${root}/emulator/services/Scale/${name}.FeatureServer/edits`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ changeType: 'FeaturesCreated' }),
      });
      await edit.text();
    }
    await until('every webhook deactivated', timeoutMs, async () => {
      const { webhooks } = (await (await fetch(`${root}/emulator/webhooks`)).json()) as { webhooks: { active: boolean }[] };
      return webhooks.filter((hook) => !hook.active).length === count ? true : undefined;
    });

    let sent = 0;
    const monitor = await monitorRedis(redis.url, ({ source }) => {
      if (source !== 'lua') sent += 1;
    });
    await reader.ping();
    await until('MONITOR on', timeoutMs, async () => (sent > 0 ? true : undefined), 10);
    sent = 0;
    let ownCommands = 1; // the INFO below
    const before = await commandsProcessed(reader);
    const startedAt = Date.now();
    running = serve(env);
    await until(
      'every service recovered',
      timeoutMs,
      async () => {
        ownCommands += 1;
        const states = (await reader.hvals(upstreamKey(PREFIX))).map(
          (text) => JSON.parse(text) as { deactivatedAt?: number; recoveredAt?: number },
        );
        const recovered = states.filter((state) => state.deactivatedAt !== undefined && (state.recoveredAt ?? 0) >= state.deactivatedAt);
        return recovered.length === count ? true : undefined;
      },
      50,
    );
    const recoverySeconds = (Date.now() - startedAt) / 1000;
    const commands = (await commandsProcessed(reader)) - before - ownCommands;
    const geohookSent = sent - ownCommands - 1; // and the INFO after
    monitor.close();
    return { recoverySeconds, recoveryRedisOps: geohookSent / count, recoveryRedisCommandsTotal: commands / count, services: count };
  } finally {
    await running?.stop();
    reader.disconnect();
    await emulator.close();
    await proxy.close();
    await redis.stop();
  }
}
