import t from 'tap';
import { EmulatorClock } from '../../src/emulator/clock.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { answerWith, startSink } from '../helpers/http-sink.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// 10 s timeouts become 500 ms: quick, yet roomy enough for a loaded machine.
const fast = { secondsToMs: (seconds: number) => seconds * 50 };

function settle(emulator: TestEmulator, count: number): Promise<Record<string, unknown>[]> {
  return waitFor(`${count} deliveries to settle`, async () => {
    const { deliveries } = (await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as { deliveries: Record<string, unknown>[] };
    return deliveries.length >= count && deliveries.every((delivery) => delivery.outcome !== 'pending') && deliveries;
  });
}

t.test('a GP job fired in the emulator reaches geohook signed, verified and classified', async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis);
  const emulator = await startEmulator(t, fast);
  for (const contentType of ['application/json', 'application/x-www-form-urlencoded']) {
    await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', {
      name: `done-${contentType}`,
      hookUrl: `${receiver.url}/webhooks/default`,
      signatureKey: TEST_KEY,
      active: 'true',
      contentType,
    });
  }
  const fired = await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome: 'failed' });
  t.equal(fired.status, 200);
  t.match(fired.body, { jobId: /^j[0-9a-f]{32}$/, deliveries: [String, String] });
  const deliveries = await settle(emulator, 2);
  t.ok(
    deliveries.every((delivery) => delivery.outcome === 'delivered'),
    'both delivered',
  );
  t.ok(
    deliveries.every((delivery) => delivery.signatureHeader === 'x-service' && !('signature' in delivery)),
    'signed in x-service, whose value the control endpoint does not show',
  );
  const jobs = await receiver.app.eventQueue.queue('gp-events').getJobs(['wait']);
  t.equal(jobs.length, 2);
  for (const job of jobs)
    t.match(job.data, { type: 'gp.job.failed', verified: true, service: { folderName: 'Tools', serviceName: 'Buffer' } });
  t.same(jobs.map((job) => job.data.contentType).sort(), ['application/json', 'application/x-www-form-urlencoded']);
});

t.test('a feature edit fires only the active webhooks whose changeTypes match', async (t) => {
  const redis = await startRedis(t);
  const emulator = await startEmulator(t, fast);
  const receiver = await startReceiver(t, redis, { TRUSTED_ORIGINS: emulator.url });
  const create = (name: string, changeTypes: string, active = 'true') =>
    emulator.admin('services/Hosted/Parcels.FeatureServer/webhooks/create', {
      name,
      changeTypes,
      active,
      hookUrl: `${receiver.url}/webhooks/default`,
      signatureKey: TEST_KEY,
    });
  await create('all', '*');
  await create('edited', 'FeaturesEdited');
  await create('deleted-only', 'FeaturesDeleted');
  await create('inactive', '*', 'false');
  const fired = await emulator.control('services/Hosted/Parcels.FeatureServer/edits', { changeType: 'FeaturesUpdated', layerId: 1 });
  t.equal((fired.body.deliveries as unknown[]).length, 2, '* and FeaturesEdited match FeaturesUpdated');
  const delivered = await settle(emulator, 2);
  const listed = (await emulator.admin('services/Hosted/Parcels.FeatureServer/webhooks')).webhooks as { id: string; name: string }[];
  const names = new Map(listed.map((hook) => [hook.id, hook.name]));
  t.same(delivered.map((delivery) => names.get(String(delivery.webhookId))).sort(), ['all', 'edited']);
  t.ok(delivered.every((delivery) => delivery.outcome === 'delivered'));
  const jobs = await receiver.app.eventQueue.queue('feature-events').getJobs(['wait']);
  t.equal(jobs.length, 1, 'both deliveries hand over the same range: one event');
  t.ok(jobs.every((job) => job.data.type === 'feature.FeaturesUpdated' && job.data.verified));
  const schema = await emulator.control('services/Parcels.FeatureServer/edits', { changeType: 'LayerSchemaChanged' });
  t.equal((schema.body.deliveries as unknown[]).length, 1, 'only * matches a schema change');
  const bad = await emulator.control('services/Parcels.FeatureServer/edits', { changeType: 'Nope' });
  t.equal(bad.status, 400);
  t.match(bad.body, { status: 'error', messages: [/changeType.*FeaturesCreated/] });
});

t.test(
  'a webhook whose receiver keeps failing is deactivated by the policy, and activateAll revives it and clears the count',
  async (t) => {
    const failing = await startSink(t, answerWith(500));
    const clock = new EmulatorClock();
    clock.set(Date.UTC(2026, 0, 1, 12));
    const emulator = await startEmulator(t, { ...fast, clock });
    await emulator.admin('services/webhooks/settings', { notificationAttempts: '2', numberOfFailures: '3', daysInPast: '2' }, 'orgadmin');
    const hook = await emulator.admin('services/Buffer.GPServer/webhooks/create', {
      name: 'flaky',
      hookUrl: `${failing.url}/`,
      active: 'true',
    });

    const fireAndSettle = async (expected: number) => {
      await emulator.control('services/Buffer.GPServer/jobs', { outcome: 'succeeded' });
      return settle(emulator, expected);
    };
    const deliveries = await fireAndSettle(1);
    t.match(deliveries[0], { outcome: 'failed', attempts: [{ statusCode: 500 }, { statusCode: 500 }] }, 'two attempts, then one failure');
    await fireAndSettle(2);
    let state = (await (await fetch(`${emulator.url}/emulator/webhooks`)).json()) as {
      webhooks: { active: boolean; failuresByDay: Record<string, number> }[];
    };
    t.same(state.webhooks[0]!.failuresByDay, { '2026-01-01': 2 });
    t.equal(state.webhooks[0]!.active, true, 'two failures of three: still active');

    await emulator.control('clock', { advanceDays: 1 });
    await fireAndSettle(3);
    state = (await (await fetch(`${emulator.url}/emulator/webhooks`)).json()) as typeof state;
    t.equal(state.webhooks[0]!.active, false, 'the third failure within two days deactivates');
    t.same((await emulator.control('services/Buffer.GPServer/jobs', {})).body.deliveries, [], 'an inactive webhook is not fired');

    const status = await emulator.admin(`services/Buffer.GPServer/webhooks/${hook.id as string}/notificationStatus`);
    t.equal((status.webhookNotificationStatus as { invoked: boolean }[]).length, 3);
    t.ok((status.webhookNotificationStatus as { invoked: boolean }[]).every((entry) => entry.invoked === false));

    await emulator.admin('services/Buffer.GPServer/webhooks/activateAll');
    state = (await (await fetch(`${emulator.url}/emulator/webhooks`)).json()) as typeof state;
    t.equal(state.webhooks[0]!.active, true);
    t.same(state.webhooks[0]!.failuresByDay, {}, 'activateAll clears the count');
  },
);

t.test('the clock endpoint sets and advances the emulator time', async (t) => {
  const emulator = await startEmulator(t);
  t.same((await emulator.control('clock', { now: 86_400_000 })).body, { now: 86_400_000 });
  const advanced = (await emulator.control('clock', { advanceDays: 2 })).body.now as number;
  t.ok(advanced >= 3 * 86_400_000 && advanced < 3 * 86_400_000 + 60_000);
  t.equal((await emulator.control('clock', { advanceDays: 'x' })).status, 400);
  t.equal((await emulator.control('services/Parcels.FeatureServer/jobs', {})).status, 400, 'jobs only on GP services');
  t.equal((await emulator.control('services/Nope.GPServer/jobs', {})).status, 404);
});
