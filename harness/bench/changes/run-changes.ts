import { findFreePort } from '../../../src/embedded/redis-server.js';
import { emulatorAdminEnv } from '../../emulator-control.js';
import { Child } from '../ipc.js';
import { processCpuMs, startRedis } from '../redis.js';
import { untilReady } from '../until-ready.js';
import type { FloorResult } from '../workers/change-floor.js';
import { measureLatency, type LatencyResult } from './change-latency.js';
import { measureThroughput, type ThroughputResult } from './change-throughput.js';

/** What `npm run bench -- --changes` prints under `changes`. */
export interface ChangesResult extends Omit<ThroughputResult, 'serverGen'> {
  /** The floor: the same change file fetched, `JSON.parse`d and `addBulk`ed to a fresh queue, rows per second. */
  floorPerSec: number;
  /** The floor's figures, and the CPU its Redis spent, ms. */
  floor: FloorResult & { redisCpuMs: number | undefined };
  /** eventsPerSec / floorPerSec. */
  vsFloor: number;
  /** A single edit's `applyEdits` to its change event handed to a consumer. */
  p50Ms: number;
  p99Ms: number;
  latency: LatencyResult;
}

export interface ChangesSettings {
  /** Parcels added in the one generation resolved. */
  features: number;
  /** Single edits timed to their change event, after a tenth as many of warm-up, at `editsPerSec` each. */
  edits: number;
  editsPerSec: number;
  /** Node options of geohook's server process (`--cpu-prof`). */
  serverExecArgv?: string[];
}

const PREFIX = 'bench-changes';
const SERVICE = 'Hosted/Parcels.FeatureServer';

/** The floor in a process of its own, on a fresh redis-server, reading the same range from the emulator. */
async function measureFloor(emulatorRoot: string, serverGens: [number, number]): Promise<ChangesResult['floor']> {
  const redis = await startRedis('fast');
  const floor = await Child.start('change floor', 'workers/change-floor.js', {
    args: [JSON.stringify({ emulatorRoot, redisUrl: redis.url, serverGens })],
  });
  try {
    const redisBeforeMs = processCpuMs(redis.pid);
    const result = await floor.call<FloorResult>('run', {}, 600_000);
    const redisAfterMs = processCpuMs(redis.pid);
    return { ...result, redisCpuMs: redisBeforeMs === undefined || redisAfterMs === undefined ? undefined : redisAfterMs - redisBeforeMs };
  } finally {
    await floor.close();
    await redis.stop();
  }
}

/**
 * Change events under volume and one by one: geohook's server (`startServer` with CHANGES on Parcels) in a process
 * of its own beside the emulator and a `change.*` consumer. First single edits at a steady pace, each timed to its
 * event in the consumer; then, the consumer stopped, one generation of `features` adds, timed until
 * `change-events` holds an event per feature, with the server's peak RSS; then the floor on the same range.
 */
export async function runChanges(settings: ChangesSettings, log: (line: string) => void): Promise<ChangesResult> {
  const redis = await startRedis('fast');
  const emulator = await Child.start<{ port: number }>('emulator', 'workers/emulator.js');
  let server: Child<{ url: string }> | undefined;
  let consumer: Child | undefined;
  try {
    const root = `http://127.0.0.1:${emulator.ready.port}`;
    const env = {
      REDIS_URL: redis.url,
      HOST: '127.0.0.1',
      PORT: String(await findFreePort()),
      ...emulatorAdminEnv(root),
      REGISTER: SERVICE,
      CHANGES: SERVICE,
      GEOHOOK_PREFIX: PREFIX,
      LOG_LEVEL: 'silent',
    };
    server = await Child.start<{ url: string }>('geohook server', 'workers/geohook-server.js', {
      args: [JSON.stringify(env)],
      execArgv: settings.serverExecArgv ?? [],
    });
    await untilReady(server.ready.url, 60_000, 'changes');

    log(`changes: ${settings.edits} single edits at ${settings.editsPerSec}/s, each timed to its change event in a consumer`);
    consumer = await Child.start('change consumer', 'workers/change-consumer.js', {
      args: [JSON.stringify({ redisUrl: redis.url, prefix: PREFIX })],
    });
    const latency = await measureLatency(root, consumer, {
      edits: settings.edits,
      warmupEdits: Math.ceil(settings.edits / 10),
      editsPerSec: settings.editsPerSec,
      timeoutMs: 30_000,
    });
    await consumer.close();
    consumer = undefined;

    log(`changes: one generation of ${settings.features.toLocaleString('en-US')} adds resolved to change-events`);
    const { serverGen, ...throughput } = await measureThroughput(
      { root, server, emulator, redisUrl: redis.url, redisPid: redis.pid, prefix: PREFIX },
      settings.features,
      Math.max(120_000, settings.features * 2),
    );
    await server.close();
    server = undefined;

    log('changes: the floor: the same change file fetched, parsed and added with addBulk to a fresh queue');
    const floor = await measureFloor(root, [serverGen - 1, serverGen]);
    const floorPerSec = floor.rows / floor.seconds;
    return {
      ...throughput,
      floorPerSec,
      floor,
      vsFloor: throughput.eventsPerSec / floorPerSec,
      p50Ms: latency.p50Ms,
      p99Ms: latency.p99Ms,
      latency,
    };
  } finally {
    await consumer?.close();
    await server?.close();
    await emulator.close();
    await redis.stop();
  }
}
