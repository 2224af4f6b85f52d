import pino from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { validateEvent } from '../../src/consumers/validate-event.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import type { GeohookEvent } from '../../src/events/envelope.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { emulatorAdminEnv } from '../emulator-control.js';
import { Child } from './ipc.js';
import { startRedis } from './redis.js';

export interface BackfillResult {
  /** Edits made while the receiver was down. */
  edits: number;
  /** From the restarted receiver's start to the event of the missed edits in its queue. */
  secondsAfterStart: number;
  /** Feature events in the queue afterwards (the delivery before the outage, and the backfilled range). */
  events: number;
  /** Whether every edit, before and during the outage, was in exactly one event's range. */
  coveredOnce: boolean;
}

export interface BackfillSettings {
  edits: number;
  timeoutMs: number;
}

const SERVICE = 'Hosted/Parcels.FeatureServer';

async function until<T>(what: string, deadline: number, check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const result = await check().catch(() => undefined);
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`backfill: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A registered receiver stopped, `edits` edits made on its feature service meanwhile (their deliveries lost),
 * the receiver started again: how long until the missed edits are an event in its queue, and whether each
 * edit is in exactly one event's range. The emulator runs in a process of its own, the receiver in this one.
 */
export async function runBackfillAfterOutage(settings: BackfillSettings): Promise<BackfillResult> {
  const deadline = Date.now() + settings.timeoutMs;
  const redis = await startRedis('fast');
  const emulator = await Child.start<{ port: number }>('emulator', 'workers/emulator.js');
  let server: RunningServer | undefined;
  try {
    const root = `http://127.0.0.1:${emulator.ready.port}`;
    const config = loadConfig({
      REDIS_URL: redis.url,
      HOST: '127.0.0.1',
      PORT: String(await findFreePort()),
      ...emulatorAdminEnv(root),
      REGISTER: SERVICE,
      LOG_LEVEL: 'silent',
    });
    const start = async (): Promise<RunningServer> => {
      const running = await startServer(config, { logger: pino({ level: 'silent' }) });
      server = running;
      return running;
    };
    const events = async (running: RunningServer): Promise<GeohookEvent[]> =>
      (await running.app.eventQueue.queue('feature-events').getJobs()).map((job) => validateEvent(job.data, 'feature'));
    const edit = async (lose: boolean): Promise<number> => {
      const response = await fetch(`${root}/emulator/services/${SERVICE}/edits`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ changeType: 'FeaturesCreated', lose }),
      });
      if (response.status !== 200) throw new Error(`backfill: an edit answered HTTP ${response.status}`);
      return ((await response.json()) as { serverGens: [number, number] }).serverGens[1];
    };

    const first = await start();
    await until('registration', deadline, async () => ((await fetch(`${config.publicUrl}/readyz`)).status === 200 ? true : undefined));
    const gens = [await edit(false)];
    await until('the first edit', deadline, async () => ((await events(first)).length === 1 ? true : undefined));
    await first.close();
    server = undefined;
    for (let n = 0; n < settings.edits; n += 1) gens.push(await edit(true));

    const startedAtMs = Date.now();
    const second = await start();
    const all = await until('the backfilled range', deadline, async () => {
      const found = await events(second);
      return found.some((event) => event.source === 'backfill') ? found : undefined;
    });
    const secondsAfterStart = (Date.now() - startedAtMs) / 1000;
    const coveredOnce = gens.every(
      (gen) =>
        all.filter(({ changes }) => changes !== undefined && changes.serverGens[0] < gen && gen <= changes.serverGens[1]).length === 1,
    );
    return { edits: settings.edits, secondsAfterStart, events: all.length, coveredOnce };
  } finally {
    await server?.close();
    await emulator.close();
    await redis.stop();
  }
}
