import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { RelayRouteConfig } from '../../../src/config/relay-schema.js';
import { eventLogKey } from '../../../src/redis/keys.js';
import { benchChangeEvent } from '../../bench/relay/bench-events.js';
import type { BrokerProcess } from '../../brokers/broker-process.js';
import { startNatsServer } from '../../brokers/nats-server.js';
import { startRabbitmqServer } from '../../brokers/rabbitmq-server.js';
import { makeTempDir, removeTempDir } from '../../cleanup.js';
import type { FaultName, FaultRow } from '../fault-row.js';
import { since, type ScenarioOptions } from '../scenario.js';
import { startStack, withStack, type Stack } from '../stack.js';
import { amqpReader, natsReader, type ReadMessage, type StreamReader } from '../stream-readers.js';

/** The stream faults: which broker, and what strikes mid-burst. */
export type StreamFault = Extract<FaultName, `stream-${string}`>;

const settings: Record<StreamFault, { format: 'nats' | 'amqp'; victim: 'geohook' | 'broker' }> = {
  'stream-nats-kill': { format: 'nats', victim: 'geohook' },
  'stream-nats-restart': { format: 'nats', victim: 'broker' },
  'stream-amqp-kill': { format: 'amqp', victim: 'geohook' },
  'stream-amqp-restart': { format: 'amqp', victim: 'broker' },
};
/** Events per feature in the burst: each feature's events carry `seq`, the order geohook stored them in. */
const EVENTS_PER_FEATURE = 10;
const DOWN_MS = 1000;
const READ_TIMEOUT_MS = 300_000;

/** The burst's `n`-th event: an update of feature `n % features`, its `seq` n. */
function burstEvent(n: number, features: number) {
  const event = benchChangeEvent('stream-fault', n);
  const feature = n % features;
  return {
    ...event,
    key: { objectId: feature, globalId: `{00000000-0000-0000-0000-${String(feature).padStart(12, '0')}}` },
    after: { attributes: { objectid: feature, seq: n } },
  };
}

/** The features whose messages (first copy of each id) came in another order than stored. */
function featuresOutOfOrder(messages: readonly ReadMessage[]): number {
  const last = new Map<unknown, number>();
  const broken = new Set<unknown>();
  for (const { body } of messages) {
    const feature = body.after?.attributes?.objectid;
    const seq = Number(body.after?.attributes?.seq);
    if ((last.get(feature) ?? -1) > seq) broken.add(feature);
    last.set(feature, seq);
  }
  return broken.size;
}

/**
 * A stream fault: `geohook serve` publishes a route's events to a private broker (`nats-server -js`, or a RabbitMQ
 * node with a quorum queue behind the exchange); `adds` change events over `adds / 10` features are stored in the
 * event log at once, and mid-burst geohook is SIGKILLed and started again a second later, or the broker is killed
 * and started again. A consumer with the broker's official client must then read every event id, exactly once after
 * deduplication by id (JetStream drops copies itself: none may remain), and every feature's events in order.
 */
export async function runStreamsFault(options: ScenarioOptions, fault: StreamFault): Promise<FaultRow> {
  const { format, victim } = settings[fault];
  const { log } = options;
  const total = options.adds;
  const features = Math.max(1, Math.floor(total / EVENTS_PER_FEATURE));
  const broker = format === 'nats' ? await startNatsServer() : await startRabbitmqServer();
  const configDir = makeTempDir(`${fault}-config`);
  let reader: StreamReader | undefined;
  try {
    reader = format === 'nats' ? undefined : await amqpReader(`amqp://guest:guest@127.0.0.1:${broker.port}`, 'geohook', 'faults');
    const route: RelayRouteConfig = {
      name: format,
      format,
      url: broker.url,
      types: ['change.*'],
      ...(format === 'amqp' ? { auth: { user: 'guest', password: 'guest' } } : {}),
      timeoutMs: 2000,
      // Tries every second for 100 s: a broker restarted meanwhile is waited for.
      retry: { attempts: 100, backoff: { type: 'fixed', delayMs: 1000, jitter: 0 } },
    };
    const config = join(configDir, 'geohook.json');
    writeFileSync(config, JSON.stringify({ relays: [route] }));
    return await withStack(await startStack(fault, 'fast', { env: { GEOHOOK_CONFIG: config } }), options.keepDirs, async (stack) => {
      reader ??= await natsReader(broker.url, 'GEOHOOK');
      const redis = new Redis(stack.redis.url);
      try {
        const startMs = performance.now();
        for (let at = 0; at < total; at += 1000) {
          const multi = redis.multi();
          for (let n = at; n < Math.min(total, at + 1000); n += 1) {
            const event = burstEvent(n, features);
            multi.xadd(eventLogKey(stack.prefix), '*', 'j', event.id, 'd', JSON.stringify(event));
          }
          await multi.exec();
        }
        const strikeAt = Math.ceil(total / 10);
        while ((await reader.stored()) < strikeAt) await sleep(5);
        const atFault = await reader.stored();
        await strike(victim, stack, broker);
        const struckAtMs = since(startMs);
        log(`${fault}: ${victim} killed ${struckAtMs} ms after the burst was stored, ${atFault} of ${total} events read`);
        const deadline = Date.now() + READ_TIMEOUT_MS;
        while ((await reader.stored()) < total && Date.now() < deadline) await sleep(100);
        const readMs = since(startMs) - struckAtMs;
        const messages = await reader.readAll();
        const firsts = new Map<string, ReadMessage>();
        for (const message of messages) if (!firsts.has(message.id)) firsts.set(message.id, message);
        const copies = messages.length - firsts.size;
        const outOfOrder = featuresOutOfOrder([...firsts.values()]);
        const lost = total - firsts.size;
        const problems: string[] = [];
        if (lost > 0) problems.push(`${lost} event ids never read`);
        if (outOfOrder > 0) problems.push(`${outOfOrder} of ${features} features read out of order`);
        if (format === 'nats' && copies > 0) problems.push(`${copies} copies in the stream (its duplicate window should drop them)`);
        if (atFault >= total) problems.push(`the fault came too late: all ${total} events were read already`);
        return {
          fault,
          durability: 'fast',
          sent: total,
          acknowledged: total,
          found: firsts.size,
          lost,
          duplicated: 0,
          zeroLossExpected: true,
          writtenAtFault: atFault,
          notes: [
            `${total} change events over ${features} features stored at once`,
            `${victim === 'geohook' ? 'geohook serve SIGKILLed' : `${format === 'nats' ? 'nats-server' : 'RabbitMQ'} killed`} with ${atFault} read`,
            `every id read ${(readMs / 1000).toFixed(1)} s after`,
            `${copies} copies dropped by id`,
            `${features - outOfOrder} of ${features} features in order`,
          ].join('; '),
          problems,
        };
      } finally {
        redis.disconnect();
      }
    });
  } finally {
    await reader?.close();
    await broker.remove();
    removeTempDir(configDir);
  }
}

/** Kills the victim and starts it again: geohook serve a second later, or the broker. */
async function strike(victim: 'geohook' | 'broker', stack: Stack, broker: BrokerProcess): Promise<void> {
  if (victim === 'geohook') {
    await stack.receiver.kill();
    await sleep(DOWN_MS);
    await stack.receiver.start();
    return;
  }
  await broker.kill();
  await broker.start();
}
