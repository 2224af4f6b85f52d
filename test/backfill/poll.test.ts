import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import t, { type Test } from 'tap';
import { subscribe } from '../../src/consumers/subscribe.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import type { GeohookEvent } from '../../src/events/envelope.js';
import { queueNames } from '../../src/queue/names.js';
import { coverage, editParcels, PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook, webhooksOf, type TestGeohook } from '../helpers/geohook.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { serviceReports } from '../helpers/service-reports.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

/** The scopes with a watermark under `prefix`. */
async function watermarked(prefix: string): Promise<string[]> {
  const raw = new Redis(redis.url);
  try {
    return Object.keys(await raw.hgetall(`${prefix}:watermarks`));
  } finally {
    raw.disconnect();
  }
}

/** Consumes every feature event of `prefix` into `into`, until teardown. */
async function consume(t: Test, prefix: string, into: GeohookEvent[]): Promise<void> {
  const subscription = subscribe({
    connection: redis.url,
    prefix,
    logger: pino({ level: 'silent' }),
    handlers: { 'feature.*': async (event) => void into.push(event) },
  });
  t.teardown(() => subscription.close());
  await subscription.ready();
}

t.test('poll mode, with no webhook and nothing delivered: the edits arrive as events, each once', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const { REGISTER: _register, ...admin } = registrationEnv(emulator, [PARCELS], prefix);
  await startGeohook(t, redis, { ...admin, POLL: PARCELS, POLL_INTERVAL_SECONDS: '0.2' });
  await waitFor('the first poll', async () => (await watermarked(prefix)).includes(`default ${PARCELS}`));
  const consumed: GeohookEvent[] = [];
  await consume(t, prefix, consumed);

  const gens: number[] = [];
  for (let n = 0; n < 5; n += 1) gens.push(await editParcels(emulator));
  await waitFor('every edit polled', () => gens.every((gen) => coverage(consumed, gen) > 0));
  t.same(await webhooksOf(emulator, PARCELS), [], 'no webhook');
  t.ok(
    consumed.every((event) => event.source === 'poll'),
    consumed.map((event) => event.source).join(', '),
  );
  t.match(consumed[0], { family: 'feature', type: 'feature.FeaturesCreated', service: { folderName: 'Hosted', serviceName: 'Parcels' } });
  for (const gen of gens) t.equal(coverage(consumed, gen), 1, `edit ${gen} in one event`);
  const [report] = await serviceReports(redis.url, prefix);
  t.match(report, { service: PARCELS, mode: 'poll', lastPollAt: String, watermark: gens.at(-1) }, 'the services view says polled');
  t.notOk(report!.webhook ?? report!.lastDeliveryAt, 'no webhook, no delivery');
});

t.test('three receivers and two consumers on one Redis, webhooks and polling both on: each edit is consumed once', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const ports = [await findFreePort(), await findFreePort(), await findFreePort()];
  // One public URL, as behind a load balancer: one webhook, its deliveries reaching the first receiver.
  const env = {
    ...registrationEnv(emulator, [PARCELS], prefix),
    PUBLIC_URL: `http://127.0.0.1:${ports[0]}`,
    POLL: PARCELS,
    POLL_INTERVAL_SECONDS: '0.3',
  };
  const receivers: TestGeohook[] = [];
  for (const port of ports) receivers.push(await startGeohook(t, redis, { ...env, PORT: String(port) }));
  await waitFor('registered', async () => (await receivers[0]!.readyz()).status === 200);
  t.equal((await webhooksOf(emulator, PARCELS)).length, 1, 'one webhook for the three');
  const consumed: GeohookEvent[] = [];
  await consume(t, prefix, consumed);
  await consume(t, prefix, consumed);

  const gens: number[] = [];
  for (let n = 0; n < 40; n += 1) {
    gens.push(await editParcels(emulator, 'FeaturesCreated', n % 3 === 1));
    if (n % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 350));
  }
  await waitFor('every edit consumed', () => gens.every((gen) => coverage(consumed, gen) > 0), { timeoutMs: 30_000 });
  // What comes after any repeat: an edit only a later poll finds, consumed, and nothing left in the queue.
  const last = await editParcels(emulator, 'FeaturesCreated', true);
  await waitFor('a later poll consumed', () => coverage(consumed, last) > 0, { timeoutMs: 30_000 });
  const connection = new Redis(redis.url);
  const queue = new Queue(queueNames.feature, { connection, prefix });
  t.teardown(async () => {
    await queue.close();
    connection.disconnect();
  });
  await waitFor('the queue drained', async () => (await queue.count()) + (await queue.getActiveCount()) === 0);
  const sources = new Set(consumed.map((event) => event.source));
  t.ok(sources.has('webhook'), `sources: ${[...sources].join(', ')}`);
  for (const gen of gens) t.equal(coverage(consumed, gen), 1, `edit ${gen} consumed once`);
});
