import type { ServerStats } from './cases/case-server.js';
import { caseSpecs, startCaseServer } from './http-cases.js';
import { Child } from './ipc.js';
import { WEBHOOK_PATH } from './payloads.js';
import { countJobs, processCpuMs, type Durability } from './redis.js';
import type { ConsumerStats } from './workers/consumer.js';
import type { LoadParams, LoadResult } from './workers/loader.js';

export interface EndToEndResult {
  events: number;
  /** 2xx answers of the receiver. */
  acked: number;
  /** Deliveries acknowledged per second while loading. */
  ingestPerSec: number;
  /** Events handled per second, from the first to the last one handled. */
  consumedPerSec: number;
  consumed: number;
  /** Seconds from the end of the load until the last event was handled. */
  drainSeconds: number;
  /** False when the queues were not empty within the time allowed. */
  drained: boolean;
  failedJobs: number;
  non2xx: number;
  errors: number;
  /**
   * CPU time per acknowledged event, µs, from the load's start until the queues were empty: what each piece
   * sharing the cores spends (absent where it could not be read).
   */
  cpuPerEventUs: { receiver?: number; consumer?: number; redis?: number; loadGenerator?: number };
}

export interface EndToEndSettings {
  events: number;
  connections: number;
  durability: Durability;
  /** Events each worker handles at once. */
  concurrency: number;
  /** Longest wait for the queues to empty after the load. */
  drainTimeoutMs: number;
  /** Node options of the consumer's process (`--cpu-prof`…). */
  consumerExecArgv?: string[];
}

/**
 * `events` deliveries into geohook's receiver (each answered) while a consumer process drains them through
 * `subscribe`. Done when every acknowledged event was handled and no job is pending.
 */
export async function runEndToEnd(loader: Child, settings: EndToEndSettings, log: (line: string) => void): Promise<EndToEndResult> {
  const geohook = caseSpecs.find((spec) => spec.name === 'geohook')!;
  const { server, redis, prefix } = await startCaseServer(geohook, settings.durability);
  let consumer: Child | undefined;
  try {
    consumer = await Child.start('consumer', 'workers/consumer.js', {
      args: [JSON.stringify({ redisUrl: redis!.url, prefix, concurrency: settings.concurrency })],
      execArgv: settings.consumerExecArgv ?? [],
    });
    await loader.call('reset');
    // CPU time so far of each process this stage starts, ms.
    const consumerPid = consumer.pid;
    const cpuNow = async (): Promise<Record<'receiver' | 'consumer' | 'redis', number | undefined>> => ({
      receiver: (await server.call<ServerStats>('stats')).cpuMs,
      consumer: processCpuMs(consumerPid),
      redis: processCpuMs(redis!.pid),
    });
    const cpuBefore = await cpuNow();
    const load = await loader.call<LoadResult>(
      'run',
      {
        url: `http://127.0.0.1:${server.ready.port}${WEBHOOK_PATH}`,
        connections: Math.min(settings.connections, settings.events),
        amount: settings.events,
        distinct: true,
      } satisfies LoadParams,
      60_000 + settings.events * 5,
    );
    const { acked } = await server.call<ServerStats>('stats');
    log(`e2e: ${load.count2xx} acknowledged at ${Math.round(load.rps)}/s; draining`);
    const deadline = load.finishedAtMs + settings.drainTimeoutMs;
    let stats: ConsumerStats;
    let drained = false;
    for (;;) {
      stats = await consumer.call<ConsumerStats>('stats');
      if (stats.consumed >= acked && (await countJobs(redis!.url, prefix, geohook.queues)).pending === 0) {
        drained = true;
        break;
      }
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const cpuAfter = await cpuNow();
    const perEvent = (before: number | undefined, after: number | undefined): number | undefined =>
      before === undefined || after === undefined || acked === 0 ? undefined : ((after - before) * 1000) / acked;
    const cpuPerEventUs = {
      receiver: perEvent(cpuBefore.receiver, cpuAfter.receiver),
      consumer: perEvent(cpuBefore.consumer, cpuAfter.consumer),
      redis: perEvent(cpuBefore.redis, cpuAfter.redis),
      loadGenerator: acked === 0 ? undefined : (load.cpuPct * 10 * (load.finishedAtMs - load.startedAtMs)) / acked,
    };
    const { failed } = await countJobs(redis!.url, prefix, geohook.queues);
    const first = stats.firstAtMs ?? load.startedAtMs;
    const last = stats.lastAtMs ?? load.finishedAtMs;
    return {
      events: settings.events,
      acked,
      ingestPerSec: load.rps,
      consumedPerSec: stats.consumed / Math.max(0.001, (last - first) / 1000),
      consumed: stats.consumed,
      drainSeconds: drained ? Math.max(0, (last - load.finishedAtMs) / 1000) : (Date.now() - load.finishedAtMs) / 1000,
      drained,
      failedJobs: failed,
      non2xx: load.non2xx,
      errors: load.errors,
      cpuPerEventUs: Object.fromEntries(Object.entries(cpuPerEventUs).filter(([, us]) => us !== undefined)),
    };
  } finally {
    await consumer?.close();
    await server.close();
    await redis?.stop();
  }
}
