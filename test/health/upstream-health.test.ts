import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import t, { type Test } from 'tap';
import { monitorRedis } from '../../harness/redis-monitor.js';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { servicesHtml } from '../../src/dashboard/services-page.js';
import { GeohookError } from '../../src/errors.js';
import { createAlertSender } from '../../src/health/alert-sender.js';
import { UpstreamHealth } from '../../src/health/upstream-health.js';
import { readServiceReports } from '../../src/queue/service-report.js';
import { startEmulator } from '../helpers/emulator.js';
import { answerWith, startSink } from '../helpers/http-sink.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const SERVICE = 'Tools/Buffer.GPServer';

/** An UpstreamHealth on a fresh prefix, alerting `alertUrl` (debounced `debounceMs`), and its backfill queue. */
async function healthOn(t: Test, alertUrl: string, debounceMs: number, recoveryPollMs = 500) {
  const connection = new Redis(redis.url);
  const prefix = uniquePrefix();
  const backfill = new Queue('backfill', { connection, prefix });
  const logger = pino({ level: 'silent' });
  const alert = createAlertSender({ url: alertUrl, debounceMs, redis: connection, prefix, logger });
  const health = new UpstreamHealth({
    redis: connection,
    prefix,
    hook: 'default',
    backfillQueue: () => backfill,
    alert,
    logger,
    recoveryPollMs,
  });
  t.teardown(async () => {
    await health.close();
    await backfill.close();
    connection.disconnect();
  });
  return { health, backfill, connection, prefix };
}

t.test('failed deliveries the server reports are kept past its clearing, counted once, and alerted once per debounce', async (t) => {
  const emulator = await startEmulator(t, { secondsToMs: (seconds) => seconds * 20 });
  const failing = await startSink(t, answerWith(500));
  const alerts = await startSink(t, answerWith(204));
  const { health } = await healthOn(t, `${alerts.url}/hook`, 60_000);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'admin', password: 'admin.pass' } });

  const hook = await emulator.admin(`services/${SERVICE}/webhooks/create`, { name: 'flaky', hookUrl: `${failing.url}/`, active: 'true' });
  const id = String(hook.id);
  const fire = async (count: number) => {
    for (let n = 0; n < count; n += 1) await emulator.control(`services/${SERVICE}/jobs`, { outcome: 'succeeded' });
    await waitFor('the deliveries failed', async () => {
      const { deliveries } = (await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as { deliveries: { outcome: string }[] };
      return deliveries.every((delivery) => delivery.outcome === 'failed');
    });
  };
  await fire(2);
  t.equal(await health.observe(SERVICE, { id, action: 'unchanged' }, client), 2, 'two failures, new');
  t.equal(await health.observe(SERVICE, { id, action: 'unchanged' }, client), 0, 'the same ones again: none new');
  await fire(1);
  t.equal(await health.observe(SERVICE, { id, action: 'unchanged' }, client), 1);
  t.equal((await health.failures(SERVICE)).length, 3);

  await client.webhooks.activateAll(SERVICE);
  t.same(await client.webhooks.notificationStatus(SERVICE, id), [], 'the server cleared its log');
  t.equal((await health.failures(SERVICE)).length, 3, 'geohook still has it');
  t.match(await health.state(SERVICE), { webhookId: id, active: true, deactivations: 0 });

  await waitFor('the alert', () => alerts.received.length > 0);
  const sent = alerts.received.map((request) => JSON.parse(request.body.toString()) as Record<string, unknown>);
  t.match(sent, [{ event: 'webhook.failing', service: SERVICE, webhookId: id, failures: 2, text: /2 failed deliveries/ }]);
  t.equal(sent.length, 1, 'the second failing alert fell within the debounce time');
});

t.test('a reactivated webhook is alerted as deactivated, and as recovered once no gap of its service waits', async (t) => {
  const alerts = await startSink(t, answerWith(200));
  const { health, backfill } = await healthOn(t, alerts.url, 0, 20);
  const online = { product: 'online' } as never;
  const service = 'Hosted/Parcels.FeatureServer';

  const gap = await backfill.add('gap', { scope: `default ${service}`, hook: 'default', serviceUrl: 'http://x', from: '1', to: '2' });
  await health.confirmRecovery(service, 'w1');
  t.equal(await health.state(service), undefined, 'nothing to confirm before a deactivation');
  await health.observe(service, { id: 'w1', action: 'reactivated' }, online);
  await health.confirmRecovery(service, 'w1');
  await health.confirmRecovery(service, 'w1'); // a second pass while the gap waits: one confirmation
  await waitFor('the deactivated alert', () => alerts.received.length === 1);
  const removedAt = Date.now();
  await gap.remove();
  await waitFor('the recovered alert', () => alerts.received.length === 2);
  t.same(
    alerts.received.map((request) => (JSON.parse(request.body.toString()) as { event: string }).event),
    ['webhook.deactivated', 'webhook.recovered'],
  );
  const state = await health.state(service);
  t.match(state, { active: true, deactivations: 1, deactivatedAt: Number, recoveredAt: Number });
  t.ok(state!.recoveredAt! >= removedAt, 'recovered only once the gap was gone, not while it waited');
  await health.confirmRecovery(service, 'w1');
  // Closing waits for every recovery it started: one started by the later pass would have alerted by then.
  await health.close();
  t.equal(alerts.received.length, 2, 'confirmed once: a later pass sends nothing');
});

/** Counts the commands each client sends to the Redis at `url` (by `host:port`), as MONITOR sees them; commands scripts run are left out. */
async function commandsByClient(t: Test, url: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const monitor = await monitorRedis(url, ({ source }) => counts.set(source, (counts.get(source) ?? 0) + 1));
  t.teardown(() => monitor.close());
  return counts;
}

t.test('recovering many services at once costs Redis a few commands per service, not one per service and pending gap', async (t) => {
  const own = await startRedis(t);
  const alerts = await startSink(t, answerWith(200));
  const connection = new Redis(own.url);
  const prefix = uniquePrefix();
  const backfill = new Queue('backfill', { connection, prefix });
  const logger = pino({ level: 'silent' });
  const alert = createAlertSender({ url: alerts.url, debounceMs: 0, redis: connection, prefix, logger });
  const health = new UpstreamHealth({
    redis: connection,
    prefix,
    hook: 'default',
    backfillQueue: () => backfill,
    alert,
    logger,
    recoveryPollMs: 20,
  });
  const producer = new Redis(own.url);
  const gaps = new Queue('backfill', { connection: producer, prefix });
  t.teardown(async () => {
    await health.close();
    await Promise.all([backfill.close(), gaps.close()]);
    connection.disconnect();
    producer.disconnect();
  });
  const services = Array.from({ length: 200 }, (_, n) => `Scale/Svc${String(n).padStart(3, '0')}.FeatureServer`);
  const online = { product: 'online' } as never;
  const jobs = await gaps.addBulk(
    services.map((service) => ({
      name: 'gap',
      data: { scope: `default ${service}`, hook: 'default', serviceUrl: 'http://x', from: '1', to: '2' },
    })),
  );
  for (const service of services) await health.observe(service, { id: service, action: 'reactivated' }, online);
  await waitFor('the deactivated alerts', () => alerts.received.length === services.length);

  const counts = await commandsByClient(t, own.url);
  await gaps.getJobCounts(); // once MONITOR sees this, it sees what follows
  await waitFor('MONITOR on', () => counts.size > 0);
  for (const service of services) await health.confirmRecovery(service, service);
  // The gaps are filled 20 at a time; each batch's services recover before the next is filled.
  for (let batch = 0; batch < services.length; batch += 20) {
    await Promise.all(jobs.slice(batch, batch + 20).map((job) => job.remove()));
    await waitFor(`the recovered alerts of batch ${batch / 20}`, () => alerts.received.length === services.length + batch + 20);
  }
  const recovered = alerts.received
    .slice(services.length)
    .map((request) => (JSON.parse(request.body.toString()) as { service: string }).service);
  t.same(recovered.sort(), services, 'every service recovered, once');
  const commands = counts.get(`127.0.0.1:${connection.stream.localPort}`) ?? 0;
  t.ok(commands > 0, "the recovery's connection was seen");
  t.ok(commands <= 20 * services.length, `${commands} commands for ${services.length} services: at most 20 per service`);
});

t.test('a recovery is confirmed by a later pass when the pass that reactivated the webhook failed halfway', async (t) => {
  const alerts = await startSink(t, answerWith(200));
  const { health } = await healthOn(t, alerts.url, 0, 20);
  const service = 'Hosted/Roads.FeatureServer';
  await health.observe(service, { id: 'w2', action: 'reactivated' }, { product: 'online' } as never);
  // That pass failed before it confirmed; the next one finds the webhook active ('unchanged').
  await health.observe(service, { id: 'w2', action: 'unchanged' }, { product: 'online' } as never);
  await health.confirmRecovery(service, 'w2');
  await waitFor('the recovered alert', () => alerts.received.length === 2);
  t.match(JSON.parse(alerts.received[1]!.body.toString()), { event: 'webhook.recovered', service });
});

t.test('two failures of the same millisecond count as two, and reading the same list again adds none', async (t) => {
  const alerts = await startSink(t, answerWith(204));
  const { health } = await healthOn(t, alerts.url, 0, 20);
  const at = 1_795_000_000_000;
  const statuses = [
    { invoked: false, invokedTimestamp: at },
    { invoked: false, invokedTimestamp: at },
    { invoked: true, invokedTimestamp: at + 1 },
  ];
  const client = { product: 'enterprise', webhooks: { notificationStatus: async () => statuses } } as never;
  t.equal(await health.observe(SERVICE, { id: 'w3', action: 'unchanged' }, client), 2);
  t.equal(await health.observe(SERVICE, { id: 'w3', action: 'unchanged' }, client), 0);
  t.same(await health.failures(SERVICE), [at, at]);
});

t.test('issue 53: the services view says why the failures came and why an upstream check failed, until one passes', async (t) => {
  const alerts = await startSink(t, answerWith(204));
  const { health, connection, prefix } = await healthOn(t, alerts.url, 0, 20);
  const at = Date.now() - 60_000;
  const client = {
    product: 'enterprise',
    webhooks: { notificationStatus: async () => [{ invoked: false, invokedTimestamp: at }] },
  } as never;
  const reason = "its signature key was not the receiver's (its deliveries were refused, 401): set to the receiver's";
  await health.observe(SERVICE, { id: 'w4', action: 'updated', reason }, client);
  await health.checkFailed(SERVICE, new GeohookError('GEOHOOK_ERR_ADMIN_API', 'the admin API answered 500 to extractChanges'));
  const [report] = await readServiceReports(connection, prefix);
  const page = servicesHtml([report!], [], { boardPath: '/ui', staleAfterMs: 3_600_000, now: Date.now() });
  t.match(
    page,
    /<td data-column="webhook" class="bad wrap">active<span class="why">upstream check failed at [\d-]+ [\d:]+: GEOHOOK_ERR_ADMIN_API: the admin API answered 500 to extractChanges<\/span><\/td>/,
    "the check's error, with its code",
  );
  t.match(page, /<td data-column="lastFailure" class="wrap">[\d-]+ [\d:]+<span class="why">its signature key was not the receiver&#39;s/);

  await health.observe(SERVICE, { id: 'w4', action: 'unchanged' }, client);
  const [passed] = await readServiceReports(connection, prefix);
  t.equal(passed!.webhook?.checkError, undefined, 'a check that passes clears the failure');
  t.match(passed!.webhook?.cause, { text: reason }, 'the cause found stays with the failures');
  const { cause: _cause, ...uncaused } = passed!.webhook!;
  const unknown = servicesHtml([{ ...passed!, webhook: uncaused }], [], {
    boardPath: '/ui',
    staleAfterMs: 3_600_000,
    now: Date.now(),
  });
  t.match(unknown, /the GIS server gives no cause: geohook doctor --service Tools\/Buffer\.GPServer checks the webhook/);
});

t.test('an alert URL that fails is logged, never thrown', async (t) => {
  const connection = new Redis(redis.url);
  t.teardown(() => connection.disconnect());
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const down = await startSink(t, answerWith(503));
  const alert = createAlertSender({ url: down.url, debounceMs: 0, redis: connection, prefix: uniquePrefix(), logger });
  await alert({ event: 'gap.backfilled', service: 'default X.FeatureServer', text: 'x' });
  t.match(JSON.parse(lines.join('')), { msg: 'alert not sent', event: 'gap.backfilled', err: { message: /answered 503/ } });
});

t.test('an alert about a service whose name holds <!channel>, markup or escapes reaches the sink plain and escaped', async (t) => {
  const connection = new Redis(redis.url);
  t.teardown(() => connection.disconnect());
  const sink = await startSink(t, answerWith(200));
  const alert = createAlertSender({
    url: sink.url,
    debounceMs: 0,
    redis: connection,
    prefix: uniquePrefix(),
    logger: pino({ level: 'silent' }),
  });
  const scope = 'default Hosted/X <!channel> *URGENT* [sign in](evil) `a`|b\u001b[2J\u009b1m&.FeatureServer';
  await alert({ event: 'gap.backfilled', service: scope, text: `geohook: backfilled the edits of ${scope} in server generations (2, 50]` });
  await alert({ event: 'webhook.failing', service: 'Tools/Buffer.GPServer', text: 'geohook: a < b & c > d on Tools/Buffer.GPServer' });
  const [named, escaped] = sink.received.map((request) => JSON.parse(request.body.toString()) as { service: string; text: string });
  t.equal(
    named!.text,
    'geohook: backfilled the edits of default Hosted/X ??channel? ?URGENT? ?sign in??evil? ?a??b??2J?1m?.FeatureServer in server generations (2, 50]',
    'the name is plain: no mention, markup or control character',
  );
  t.equal(named!.service, scope, 'the service field keeps the name as it came');
  t.equal(escaped!.text, 'geohook: a &lt; b &amp; c &gt; d on Tools/Buffer.GPServer', "&, < and > escaped as Slack's rules ask");
});
