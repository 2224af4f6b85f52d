import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { fanoutLeaseKey, subscriptionsKey } from '../../../src/redis/keys.js';
import { makeTempDir, removeTempDir } from '../../cleanup.js';
import { countByEventId, judge, readStoredJobs } from '../audit.js';
import { FAULTS_SECRET } from '../deliveries.js';
import type { FaultRow, SubscriptionCount } from '../fault-row.js';
import { watchLease } from '../lease-watch.js';
import { startLoad, type DeliveryOutcome } from '../load.js';
import { ReceiverProcess } from '../receiver-process.js';
import { since, summarizeLoad, type ScenarioOptions } from '../scenario.js';
import { startStack, withStack, type Stack } from '../stack.js';
import {
  consumeSubscription,
  entriesBehind,
  judgeSubscription,
  readSubscriptionJobs,
  waitUntilFannedOut,
  type AuditedDelivery,
  type FanoutProgress,
} from '../subscription-audit.js';
import { faultSubscriptions, kindOf, mixedDelivery, writeSubscriptionsConfig, type DeliveryKind } from '../subscription-deliveries.js';

/** How long a killed receiver, or Redis, stays dead before it is started again. */
const DOWN_MS = 1000;
/** The longest wait for the receivers to make the subscriptions of their config. */
const DECLARE_TIMEOUT_MS = 15_000;
/** A fault as it struck: how far into the burst, and how far the fan-out was behind the log just before. */
interface Strike {
  what: string;
  atMs: number;
  /** Deliveries started when it struck. */
  sent: number;
  /** Log entries not yet handed over; undefined when Redis did not answer. */
  behind: number | undefined;
  /** It killed the receiver running the fan-out (the holder of its lease, alive until then). */
  killedFanout: boolean;
}

/** Resolves once a receiver holds the fan-out's lease (the one receiver running: it runs the fan-out). */
async function waitForLease(redis: Redis, prefix: string): Promise<void> {
  const deadline = Date.now() + DECLARE_TIMEOUT_MS;
  while ((await redis.exists(fanoutLeaseKey(prefix))) === 0) {
    if (Date.now() > deadline) throw new Error(`no receiver took the fan-out's lease within ${DECLARE_TIMEOUT_MS} ms`);
    await sleep(20);
  }
}

/** Resolves once the receivers have made every subscription of their config (they make them at start-up). */
async function waitForSubscriptions(redis: Redis, prefix: string): Promise<void> {
  const deadline = Date.now() + DECLARE_TIMEOUT_MS;
  while ((await redis.hlen(subscriptionsKey(prefix))) < faultSubscriptions.length) {
    if (Date.now() > deadline) throw new Error(`the subscriptions of GEOHOOK_CONFIG were not made within ${DECLARE_TIMEOUT_MS} ms`);
    await sleep(20);
  }
}

/**
 * The subscriptions fault: two receivers (`geohook serve`) on one Redis (appendfsync always, DURABILITY=strict), with
 * three subscriptions in GEOHOOK_CONFIG (`gp.*`; `feature.*` and `gp.*`; `gp.job.succeeded` of Tools/Buffer), take a
 * burst of signed GP and feature deliveries, half each. A fifth of the way in receiver A (the first to run the
 * fan-out) is SIGKILLed, at two fifths redis-server, at three fifths receiver B, each started again a second later.
 * One of the kills must kill the receiver running the fan-out. Once the fan-out has handed the whole log over, each
 * subscription's queue must hold every acknowledged event it takes exactly once by id (and nothing else), and a
 * consumer of it (`subscribe({subscription})`) be handed each once.
 */
export async function runSubscriptionsFault(options: ScenarioOptions): Promise<FaultRow> {
  const configDir = makeTempDir('subscriptions-config');
  const env = { GEOHOOK_CONFIG: writeSubscriptionsConfig(configDir) };
  try {
    return await withStack(await startStack('subscriptions', 'strict', { env }), options.keepDirs, async (stack) => {
      const second = new ReceiverProcess({
        redisUrl: stack.redis.url,
        prefix: stack.prefix,
        secret: FAULTS_SECRET,
        durability: 'strict',
        logFile: join(stack.dir, 'receiver-b.log'),
        env,
      });
      const redis = new Redis(stack.redis.url, { maxRetriesPerRequest: null });
      // Answers at once, or fails at once while Redis is down: what the fan-out had left when a fault struck.
      const probe = new Redis(stack.redis.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
      for (const connection of [redis, probe]) connection.on('error', () => undefined);
      try {
        // Receiver A runs the fan-out: B starts once A holds its lease, so that A's kill, the first fault, strikes it.
        await waitForLease(redis, stack.prefix);
        await second.start();
        await waitForSubscriptions(redis, stack.prefix);
        return await burst(stack, second, { redis, probe }, options);
      } finally {
        redis.disconnect();
        probe.disconnect();
        await second.stop();
      }
    });
  } finally {
    removeTempDir(configDir);
  }
}

/** The burst, the faults, and the audit of every queue. */
async function burst(
  stack: Stack,
  second: ReceiverProcess,
  { redis, probe }: { redis: Redis; probe: Redis },
  options: ScenarioOptions,
): Promise<FaultRow> {
  const { ratePerSecond, concurrency, loadSeconds, log } = options;
  const { prefix } = stack;
  const perReceiver = Math.round((ratePerSecond * loadSeconds) / 2);
  const lease = watchLease(probe, fanoutLeaseKey(prefix));
  const loads = (
    [
      ['subscriptions-a', stack.receiver],
      ['subscriptions-b', second],
    ] as const
  ).map(([tag, receiver]) =>
    startLoad({
      url: receiver.url,
      tag,
      count: perReceiver,
      ratePerSecond: ratePerSecond / 2,
      concurrency: Math.max(1, Math.round(concurrency / 2)),
      delivery: mixedDelivery,
    }),
  );
  const total = perReceiver * loads.length;
  const sent = (): number => loads.reduce((sum, load) => sum + load.sent(), 0);
  const reach = async (fraction: number): Promise<void> => {
    while (sent() < total * fraction) await sleep(5);
  };
  const startMs = loads[0]!.startedAtMs;
  const strikes: Strike[] = [];
  /** The receivers' kills: the lease's holder then, and when (`performance.now()`), judged once the burst is over. */
  const kills: { struck: Strike; holder: string | undefined; atMs: number }[] = [];
  const strike = async (what: string, hurt: () => Promise<unknown>, killsReceivers = true): Promise<void> => {
    const [behind, holder] = await Promise.all([entriesBehind(probe, prefix).catch(() => undefined), lease.holder()]);
    const struck: Strike = { what, atMs: since(startMs), sent: sent(), behind, killedFanout: false };
    strikes.push(struck);
    if (killsReceivers) kills.push({ struck, holder, atMs: performance.now() });
    await hurt();
    log(
      `subscriptions: ${what} at ${struck.atMs} ms (${struck.sent} of ${total} deliveries started, fan-out ${behind ?? '?'} entries behind)`,
    );
  };
  const heal = async (what: string, start: () => Promise<unknown>): Promise<void> => {
    await sleep(DOWN_MS);
    await start();
    log(`subscriptions: ${what} at ${since(startMs)} ms (${sent()} deliveries started)`);
  };
  // Each fault on its own schedule: a slow restart does not put off the next one (they may overlap).
  const faults = [
    async () => {
      await reach(1 / 5);
      await strike('receiver A SIGKILLed', () => stack.receiver.kill());
      await heal('receiver A serving again', () => stack.receiver.start());
    },
    async () => {
      await reach(2 / 5);
      await strike('redis-server SIGKILLed', () => stack.redis.kill(), false);
      await heal('redis-server up again', () => stack.redis.restart());
    },
    async () => {
      await reach(3 / 5);
      await strike('receiver B SIGKILLed', () => second.kill());
      await heal('receiver B serving again', () => second.start());
    },
  ];
  const [outcomesA, outcomesB] = await Promise.all([loads[0]!.done, loads[1]!.done, ...faults.map((fault) => fault())]);
  const loadMs = since(startMs);
  lease.stop();
  // A kill struck the holder that lived through the kills before it and never renewed the lease after.
  kills.forEach(({ struck, holder, atMs }, index) => {
    struck.killedFanout = holder !== undefined && lease.struck(holder, atMs, kills[index - 1]?.atMs ?? Number.NEGATIVE_INFINITY);
    if (struck.killedFanout) log(`subscriptions: ${struck.what} killed the receiver running the fan-out`);
  });
  const fanned = await waitUntilFannedOut(redis, prefix);
  log(
    `subscriptions: the fan-out ${fanned.caughtUp ? 'caught up' : `still ${fanned.behind} entries behind`} ${fanned.waitedMs} ms after the burst`,
  );
  return audit(stack, redis, { outcomes: [outcomesA, outcomesB], strikes, loadMs, fanned, total });
}

/** Judges the family queues and every subscription's queue against the deliveries; the row. */
async function audit(
  stack: Stack,
  redis: Redis,
  run: {
    outcomes: DeliveryOutcome[][];
    strikes: readonly Strike[];
    loadMs: number;
    fanned: FanoutProgress;
    total: number;
  },
): Promise<FaultRow> {
  const { strikes, fanned, total } = run;
  const kinds: DeliveryKind[] = run.outcomes.flatMap((outcomes) => outcomes.map((_, index) => kindOf(index)));
  const summary = summarizeLoad(run.outcomes.flat());
  const familyJobs = await readStoredJobs(stack.redis.url, stack.prefix);
  const verdict = judge(summary.deliveries, familyJobs);
  const familyCounts = countByEventId(familyJobs);
  const familyJobIds = new Map(familyJobs.flatMap((job) => (job.eventId === undefined ? [] : [[job.eventId, job.jobId] as const])));
  const lostIds = new Set(summary.deliveries.filter((d) => d.acknowledged && !familyCounts.has(d.eventId)).map((d) => d.eventId));
  const doubledIds = new Set([...familyCounts].filter(([, count]) => count > 1).map(([eventId]) => eventId));
  const problems = [...summary.problems];
  // Each queue read as it is, then consumed: a consumer must be handed each event it holds once.
  const judged = await Promise.all(
    faultSubscriptions.map(async ({ config: { name }, takes }) => {
      const deliveries: AuditedDelivery[] = summary.deliveries.map((delivery, index) => ({
        ...delivery,
        taken: (takes as readonly DeliveryKind[]).includes(kinds[index]!),
      }));
      const held = await readSubscriptionJobs(redis, stack.prefix, name);
      const handed = await consumeSubscription(redis, stack.prefix, name, held.jobs.length);
      return { ...judgeSubscription(name, deliveries, held, handed, familyJobIds), deliveries, held };
    }),
  );
  for (const result of judged) {
    result.lostIds.forEach((id) => lostIds.add(id));
    result.doubledIds.forEach((id) => doubledIds.add(id));
    problems.push(...result.problems);
  }
  const counts: SubscriptionCount[] = judged.map(({ count }) => count);
  // Found: stored in its family's queue and in every subscription's queue that takes it.
  const heldIds = judged.map(({ held }) => new Set(held.jobs.map((job) => job.eventId)));
  const found = summary.deliveries.filter(
    ({ eventId }, index) =>
      familyCounts.has(eventId) && judged.every(({ deliveries }, s) => !deliveries[index]!.taken || heldIds[s]!.has(eventId)),
  ).length;

  if (!fanned.caughtUp)
    problems.push(`the fan-out was still ${fanned.behind} log entries behind ${Math.round(fanned.waitedMs / 1000)} s after the burst`);
  if (verdict.lost > 0) problems.push(`${verdict.lost} acknowledged deliveries have no job in their family's queue`);
  if (verdict.duplicated > 0) problems.push(`${verdict.duplicated} deliveries have more than one job in their family's queue`);
  if (verdict.strangers > 0) problems.push(`${verdict.strangers} family jobs belong to no delivery`);
  if (strikes.length !== 3) problems.push(`${strikes.length} of 3 faults struck`);
  if (!strikes.some(({ killedFanout }) => killedFanout)) problems.push('no fault killed the receiver running the fan-out');
  for (const { what, sent } of strikes) if (sent >= total) problems.push(`${what} came too late: every delivery had been started`);

  const notes = [
    ...summary.notes,
    `2 receivers, ${faultSubscriptions.length} subscriptions`,
    ...strikes.map(
      ({ what, atMs, behind, killedFanout }) =>
        `${what} at ${(atMs / 1000).toFixed(1)} s (fan-out ${behind ?? '?'} behind${killedFanout ? ', its receiver killed' : ''})`,
    ),
    `burst ${(run.loadMs / 1000).toFixed(1)} s, fan-out ${fanned.caughtUp ? 'caught up' : 'still behind'} ${(fanned.waitedMs / 1000).toFixed(1)} s after`,
    ...(verdict.storedUnacknowledged > 0 ? [`${verdict.storedUnacknowledged} stored without a 2xx`] : []),
    ...counts.map(
      (count) =>
        `sub-${count.name}: ${count.found}/${count.takes} held, ${count.lost} lost, ${count.duplicated} doubled, ${count.consumed} consumed`,
    ),
  ];
  return {
    fault: 'subscriptions',
    durability: 'strict',
    sent: verdict.sent,
    acknowledged: verdict.acknowledged,
    found,
    lost: lostIds.size,
    duplicated: doubledIds.size,
    zeroLossExpected: true,
    subscriptions: counts,
    notes: notes.join('; '),
    problems,
  };
}
