import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import type { GeohookEvent } from '../../../src/events/envelope.js';
import { backfillQueueName, queueNames } from '../../../src/queue/names.js';
import { startCli } from '../../helpers/cli.js';
import { coverage, editParcels, PARCELS } from '../../helpers/edits.js';
import { deliveriesEnded, startEmulator } from '../../helpers/emulator.js';
import { registrationEnv, webhooksOf } from '../../helpers/geohook.js';
import { answerWith, startSink } from '../../helpers/http-sink.js';
import { configFile, uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { serviceReports } from '../../helpers/service-reports.js';
import { queueDrained, waitFor } from '../../helpers/wait.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

// Issue 18's acceptance, through the processes users run: `geohook serve` receivers and `geohook consume`
// consumers on one Redis, the emulator as the GIS server.

const redis = await startRedis(t);

/** A running `geohook serve` or `geohook consume`, killed at teardown unless stopped before. */
interface Process {
  child: ChildProcess;
  output: () => string;
  /** SIGTERM, and the exit it leads to. */
  stop(): Promise<void>;
}

async function start(t: Test, args: string[], env: Record<string, string>, ready: RegExp): Promise<Process> {
  const { child, output } = await startCli(args, env, ready);
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  return {
    child,
    output,
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `geohook serve` on `port`, once it listens. */
const serve = (t: Test, env: Record<string, string>, port: number): Promise<Process> =>
  start(t, ['serve', '--host', '127.0.0.1', '--port', String(port)], env, /Server listening/);

/** `geohook consume` of the feature events, once it consumes. */
const consume = (t: Test, prefix: string): Promise<Process> =>
  start(t, ['consume', '--type', 'feature.*', '--redis-url', redis.url, '--prefix', prefix], {}, /"msg":"consuming/);

/** The events a `geohook consume` printed (one JSON line each). */
const printed = (consumer: Process): GeohookEvent[] =>
  consumer
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{"id":'))
    .map((line) => JSON.parse(line) as GeohookEvent);

const readyz = async (port: number): Promise<number> => (await fetch(`http://127.0.0.1:${port}/readyz`)).status;

t.test(
  'geohook serve stopped, 20 edits, its webhook deactivated: started again, the webhook is active and each edit consumed once',
  async (t) => {
    const emulator = await startEmulator(t, { secondsToMs: (seconds) => seconds * 20 });
    await emulator.admin('services/webhooks/settings', { notificationAttempts: '1', numberOfFailures: '3', daysInPast: '1' }, 'orgadmin');
    const alerts = await startSink(t, answerWith(200));
    const prefix = uniquePrefix();
    const port = await findFreePort();
    const env = {
      ...registrationEnv(emulator, [PARCELS], prefix),
      REDIS_URL: redis.url,
      ALERT_URL: `${alerts.url}/alerts`,
      // The health interval: the pass that finds the webhook deactivated comes at most this long after.
      GEOHOOK_CONFIG: configFile(t, { registration: { intervalSeconds: 1 } }),
    };
    const consumer = await consume(t, prefix);
    const first = await serve(t, env, port);
    await waitFor('registered', async () => (await readyz(port)) === 200);
    const before = await editParcels(emulator);
    await waitFor('the first edit consumed', () => printed(consumer).length === 1);
    await first.stop();

    const changeTypes = ['FeaturesCreated', 'FeaturesUpdated', 'FeaturesDeleted'];
    const missed: number[] = [];
    for (let n = 0; n < 20; n += 1) missed.push(await editParcels(emulator, changeTypes[n % 3]));
    await waitFor('the webhook deactivated by the server', async () => (await webhooksOf(emulator, PARCELS))[0]?.active === false);

    await serve(t, env, port);
    await waitFor('the webhook active again', async () => (await webhooksOf(emulator, PARCELS))[0]?.active === true);
    const events = await waitFor('every missed edit consumed', () => {
      const all = printed(consumer);
      return missed.every((gen) => coverage(all, gen) > 0) && all;
    });
    t.same(events.map((event) => event.source).sort(), ['backfill', 'webhook']);
    for (const gen of [before, ...missed]) t.equal(coverage(events, gen), 1, `edit ${gen} consumed once`);
    const kinds = await waitFor('the recovered alert', () => {
      const types = alerts.received.map((request) => (JSON.parse(request.body.toString()) as { event: string }).event);
      return types.includes('webhook.recovered') && types;
    });
    t.ok(kinds.indexOf('webhook.deactivated') < kinds.indexOf('webhook.recovered'), `deactivated, then recovered: ${kinds.join(', ')}`);
    const [report] = await serviceReports(redis.url, prefix);
    t.match(report, { service: PARCELS, webhook: { active: true, deactivations: 1 }, watermark: missed.at(-1), lastBackfillAt: String });
  },
);

t.test('three geohook serve and two geohook consume on one Redis, webhooks and polling on: each edit is consumed once', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const ports = [await findFreePort(), await findFreePort(), await findFreePort()];
  // One public URL, as behind a load balancer: one webhook, its deliveries reaching the first receiver.
  const env = {
    ...registrationEnv(emulator, [PARCELS], prefix),
    REDIS_URL: redis.url,
    PUBLIC_URL: `http://127.0.0.1:${ports[0]}`,
    POLL: PARCELS,
    POLL_INTERVAL_SECONDS: '0.3',
  };
  await Promise.all(ports.map((port) => serve(t, env, port)));
  await waitFor('registered', async () => (await readyz(ports[0]!)) === 200);
  t.equal((await webhooksOf(emulator, PARCELS)).length, 1, 'one webhook for the three');
  const consumers = await Promise.all([consume(t, prefix), consume(t, prefix)]);
  const consumed = (): GeohookEvent[] => consumers.flatMap(printed);

  const gens: number[] = [];
  for (let n = 0; n < 30; n += 1) {
    gens.push(await editParcels(emulator, 'FeaturesCreated', n % 3 === 1));
    if (n % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 350));
  }
  await waitFor('every edit consumed', () => gens.every((gen) => coverage(consumed(), gen) > 0), { timeoutMs: 30_000 });
  // What comes after any repeat: once every delivery ended and every gap is filled, an edit only a later poll finds.
  // Its event is enqueued after any repeat of theirs; once it is consumed and the queue drained, every event
  // enqueued before it was consumed too.
  const connection = new Redis(redis.url);
  const features = new Queue(queueNames.feature, { connection, prefix });
  const backfill = new Queue(backfillQueueName, { connection, prefix });
  t.teardown(async () => {
    await Promise.all([features.close(), backfill.close()]);
    connection.disconnect();
  });
  await deliveriesEnded(emulator);
  await queueDrained(backfill, 'the gaps filled');
  const last = await editParcels(emulator, 'FeaturesCreated', true);
  gens.push(last);
  await waitFor('a later poll consumed', () => coverage(consumed(), last) > 0, { timeoutMs: 30_000 });
  await queueDrained(features, 'every feature event consumed');
  // Stopped cleanly, each consumer has printed all it consumed: a range handed over twice would be here.
  await Promise.all(consumers.map((consumer) => consumer.stop()));
  const events = consumed();
  const sources = new Set(events.map((event) => event.source));
  t.ok(sources.has('webhook') && sources.size > 1, `sources: ${[...sources].join(', ')}`);
  for (const gen of gens) t.equal(coverage(events, gen), 1, `edit ${gen} consumed once`);
});
