import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { SubscriptionConfig } from '../../../src/config/subscription-schema.js';
import { eventLogKey } from '../../../src/redis/keys.js';
import type { ServerStats } from '../cases/case-server.js';
import { median } from '../figures.js';
import type { Child } from '../ipc.js';
import { processCpuMs, startRedis } from '../redis.js';
import type { LoadParams, LoadResult } from '../workers/loader.js';
import { benchSubscriptions, PREFIX, startSubscribedServer, waitingLengths, waitListKeys } from './subscription-server.js';

/** One turn of the load on geohook's server with some subscriptions. */
export interface AckTurn {
  round: number;
  subscriptions: number;
  /** 2xx answers per second over the measured window. */
  ackPerSec: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** Events stored (warm-up included) and, when the load stopped, those already in every subscription's queue. */
  stored: number;
  handedOver: number;
  /** CPU over the measured window, % of one core: geohook's server (fan-out included), its redis-server, the load generator. */
  serverCpuPct: number;
  redisCpuPct?: number;
  loaderCpuPct: number;
}

export interface AckSettings {
  rounds: number;
  subscriptions: number;
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
}

/** ackPerSec with no subscription and with `subscriptions`: medians over the rounds, and the median of their ratios per round. */
export interface AckResult {
  ackPerSec0: number;
  ackPerSecN: number;
  ratio: number;
  turns: AckTurn[];
}

/** One turn: a fresh redis-server, geohook's server with `subscriptions`, a warm-up, then the measured load. */
async function ackTurn(
  loader: Child,
  round: number,
  subscriptions: readonly SubscriptionConfig[],
  settings: AckSettings,
): Promise<AckTurn> {
  const redis = await startRedis('fast');
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const dir = mkdtempSync(join(tmpdir(), 'geohook-bench-subs-'));
  let server: Child | undefined;
  try {
    const started = await startSubscribedServer(connection, redis.url, dir, subscriptions);
    server = started.server;
    const load = (durationSeconds: number): Promise<LoadResult> =>
      loader.call<LoadResult>(
        'run',
        { url: started.webhookUrl, connections: settings.connections, distinct: true, durationSeconds } satisfies LoadParams,
        60_000 + durationSeconds * 2000,
      );
    await loader.call('reset');
    if (settings.warmupSeconds > 0) await load(settings.warmupSeconds);
    const cpuBefore = { server: (await server.call<ServerStats>('stats')).cpuMs, redis: processCpuMs(redis.pid) };
    const result = await load(settings.durationSeconds);
    const cpuAfter = { server: (await server.call<ServerStats>('stats')).cpuMs, redis: processCpuMs(redis.pid) };
    const pctOf = (ms: number): number => (ms / (result.finishedAtMs - result.startedAtMs)) * 100;
    const handedOver = subscriptions.length === 0 ? 0 : Math.min(...(await waitingLengths(connection, waitListKeys(subscriptions))));
    return {
      round,
      subscriptions: subscriptions.length,
      ackPerSec: result.rps,
      p99Ms: result.p99Ms,
      non2xx: result.non2xx,
      errors: result.errors,
      stored: await connection.xlen(eventLogKey(PREFIX)),
      handedOver,
      serverCpuPct: pctOf(cpuAfter.server - cpuBefore.server),
      ...(cpuBefore.redis === undefined || cpuAfter.redis === undefined ? {} : { redisCpuPct: pctOf(cpuAfter.redis - cpuBefore.redis) }),
      loaderCpuPct: result.cpuPct,
    };
  } finally {
    await server?.close();
    connection.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Signed deliveries as fast as geohook's server answers them, with no subscription and with `subscriptions` (each
 * taking every delivery), in turns within each round and in the other order the next round (0, N, N, 0, 0, N…), so
 * that a drift of the machine weighs on both alike.
 */
export async function measureAcks(loader: Child, settings: AckSettings, log: (line: string) => void): Promise<AckResult> {
  const turns: AckTurn[] = [];
  for (let round = 1; round <= settings.rounds; round += 1) {
    const counts = round % 2 === 1 ? [0, settings.subscriptions] : [settings.subscriptions, 0];
    for (const count of counts) {
      const turn = await ackTurn(loader, round, benchSubscriptions(count), settings);
      turns.push(turn);
      log(
        `subscriptions: round ${round}/${settings.rounds}, ${count} subscriptions: ${Math.round(turn.ackPerSec)} acks/s, p99 ${turn.p99Ms} ms, ` +
          `CPU % server ${Math.round(turn.serverCpuPct)}, redis ${Math.round(turn.redisCpuPct ?? Number.NaN)}, load generator ${Math.round(turn.loaderCpuPct)}` +
          (count === 0 ? '' : `; ${turn.handedOver} of ${turn.stored} events in every subscription when the load stopped`),
      );
    }
  }
  const of = (round: number, count: number): number => turns.find((t) => t.round === round && t.subscriptions === count)!.ackPerSec;
  const rounds = Array.from({ length: settings.rounds }, (_, i) => i + 1);
  return {
    ackPerSec0: median(rounds.map((round) => of(round, 0))),
    ackPerSecN: median(rounds.map((round) => of(round, settings.subscriptions))),
    ratio: median(rounds.map((round) => of(round, settings.subscriptions) / of(round, 0))),
    turns,
  };
}
