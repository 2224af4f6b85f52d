import { Queue, type JobType } from 'bullmq';
import { Redis } from 'ioredis';
import { changeEventsQueueName } from '../../../src/changes/change-event.js';
import { changesQueueName } from '../../../src/changes/change-queues.js';
import { bulkAdd } from '../../emulator-control.js';
import type { ServerStats } from '../cases/case-server.js';
import type { Child } from '../ipc.js';
import { processCpuMs } from '../redis.js';

/** One generation of many adds resolved into change events. */
export interface ThroughputResult {
  features: number;
  /** The generation the bulk made. */
  serverGen: number;
  /** Change events the queue gained (one per feature added, when it is right). */
  events: number;
  /** The bulk's own request: the emulator adding the features and firing the webhooks. */
  bulkSeconds: number;
  /**
   * From the bulk's answer (the generation exists and its webhooks are fired: where the floor's clock starts too)
   * until the queue held its first event (the range read and turned into events), then all.
   */
  firstEventSeconds: number;
  seconds: number;
  eventsPerSec: number;
  /** geohook's server: its peak RSS before the bulk and once the range was resolved, MiB. */
  rssBeforeMb: number;
  rssPeakMb: number;
  rssDeltaMb: number;
  /** CPU each process spent from the bulk's request until the range was resolved, ms. */
  cpuMs: { server: number; emulator: number; redis: number | undefined };
}

type Stats = Omit<ServerStats, 'acked'>;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The processes the measure reads figures from. */
export interface ThroughputProcesses {
  root: string;
  server: Child;
  emulator: Child;
  redisUrl: string;
  redisPid: number | undefined;
  prefix: string;
}

/**
 * `bulk` of `features` Parcels (one generation, the webhooks fired once) on a service geohook follows: the time from
 * the bulk's answer until `change-events` holds an event per feature, counted with BullMQ's job counts (no consumer runs), then
 * the server's peak RSS once the range is resolved (its previous values written too).
 */
export async function measureThroughput(processes: ThroughputProcesses, features: number, timeoutMs: number): Promise<ThroughputResult> {
  const { root, server, emulator, redisUrl, redisPid, prefix } = processes;
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const events = new Queue(changeEventsQueueName, { connection, prefix });
  const ranges = new Queue(changesQueueName, { connection, prefix });
  try {
    const jobCount = async (queue: Queue, states: JobType[]): Promise<number> =>
      Object.values(await queue.getJobCounts(...states)).reduce((sum, n) => sum + n, 0);
    const allStates: JobType[] = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'];
    const before = await jobCount(events, allStates);
    const idle = await server.call<Stats>('stats');
    const emulatorIdle = await emulator.call<Stats>('stats');
    const redisIdleMs = processCpuMs(redisPid);
    const deadline = Date.now() + timeoutMs;

    const bulkStartedAtMs = performance.now();
    const { serverGen } = await bulkAdd(root, 'Hosted/Parcels.FeatureServer', features);
    // geohook can start only once the emulator has made the generation: the clock starts there, as the floor's does.
    const startedAtMs = performance.now();
    const bulkSeconds = (startedAtMs - bulkStartedAtMs) / 1000;
    let seen = 0;
    let firstEventSeconds = Number.NaN;
    while ((seen = (await jobCount(events, allStates)) - before) < features && Date.now() < deadline) {
      if (seen > 0 && Number.isNaN(firstEventSeconds)) firstEventSeconds = (performance.now() - startedAtMs) / 1000;
      await sleep(25);
    }
    const seconds = (performance.now() - startedAtMs) / 1000;
    // A small generation may be written whole between two polls.
    if (seen > 0 && Number.isNaN(firstEventSeconds)) firstEventSeconds = seconds;
    while ((await jobCount(ranges, ['wait', 'active', 'delayed'])) > 0 && Date.now() < deadline) await sleep(25);

    const peak = await server.call<Stats>('stats');
    const emulatorPeak = await emulator.call<Stats>('stats');
    const redisMs = processCpuMs(redisPid);
    return {
      features,
      serverGen,
      events: (await jobCount(events, allStates)) - before,
      bulkSeconds,
      firstEventSeconds,
      seconds,
      eventsPerSec: seen / seconds,
      rssBeforeMb: idle.maxRssMb,
      rssPeakMb: peak.maxRssMb,
      rssDeltaMb: peak.maxRssMb - idle.maxRssMb,
      cpuMs: {
        server: peak.cpuMs - idle.cpuMs,
        emulator: emulatorPeak.cpuMs - emulatorIdle.cpuMs,
        redis: redisMs === undefined || redisIdleMs === undefined ? undefined : redisMs - redisIdleMs,
      },
    };
  } finally {
    await Promise.all([events.close(), ranges.close()]);
    await connection.quit().catch(() => connection.disconnect());
  }
}
