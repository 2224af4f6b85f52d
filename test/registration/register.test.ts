import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { GeohookEvent } from '../../src/events/envelope.js';
import { GENERATED_KEY_BYTES } from '../../src/signature/hook-keys.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { eventOf } from '../helpers/envelope.js';
import { registrationEnv, startGeohook, webhooksOf, type TestGeohook } from '../helpers/geohook.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const SERVICES = ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'];
const client = new Redis(redis.url);
t.teardown(() => client.quit());

interface DeliveryRecord {
  webhookId: string;
  outcome: string;
  attempts: { statusCode?: number }[];
}

/** Fires a Buffer job in the emulator; resolves with the receiver's event once its delivery is done. */
async function fireJob(
  t: Test,
  emulator: TestEmulator,
  geohook: TestGeohook,
): Promise<{ record: DeliveryRecord; event: GeohookEvent | undefined }> {
  const fired = await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome: 'succeeded' });
  t.equal(fired.status, 200);
  const [deliveryId] = fired.body.deliveries as string[];
  t.ok(deliveryId, 'the job fires one delivery');
  const record = await waitFor('the delivery to finish', async () => {
    const { deliveries } = (await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as {
      deliveries: (DeliveryRecord & { id: string })[];
    };
    const found = deliveries.find((delivery) => delivery.id === deliveryId);
    return found !== undefined && found.outcome !== 'pending' ? found : undefined;
  });
  const jobs = await geohook.server.app.eventQueue.queue('gp-events').getJobs();
  const event = jobs.map(eventOf).find((data) => (data.payload as { jobId?: string }).jobId === fired.body.jobId);
  return { record, event };
}

t.test('first start registers one active webhook per service and the configured key verifies its deliveries', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const env = {
    ...registrationEnv(emulator, SERVICES, prefix),
    HOOK_SECRETS: 'configured-key,older-key',
    CHANGE_TYPES: 'FeaturesCreated,FeaturesUpdated',
  };
  const geohook = await startGeohook(t, redis, env);
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);

  const hookUrl = `${geohook.url}/webhooks/default`;
  for (const service of SERVICES) {
    const hooks = await webhooksOf(emulator, service);
    t.equal(hooks.length, 1, `${service} has one webhook`);
    t.match(hooks[0], { name: 'geohook', hookUrl, active: true, contentType: 'application/json', signatureKey: 'configured-key' });
  }
  t.strictSame((await webhooksOf(emulator, 'Hosted/Parcels.FeatureServer'))[0]?.changeTypes, ['FeaturesCreated', 'FeaturesUpdated']);

  const { record, event } = await fireJob(t, emulator, geohook);
  t.same(
    record.attempts.map((attempt) => attempt.statusCode),
    [202],
  );
  t.equal(record.outcome, 'delivered');
  t.match(event, { type: 'gp.job.succeeded', verified: true });
  t.equal(await client.llen(`${prefix}:hooks:default:keys`), 0, 'no key is generated when one is configured');
  t.notOk(geohook.log().includes('configured-key'), 'the key never reaches the log');
  t.notOk(geohook.log().includes('admin.pass'), 'the password never reaches the log');
});

t.test('without a configured key a generated key is kept in Redis, registered, accepted, and shared by a second receiver', async (t) => {
  const emulator = await startEmulator(t);
  const env = registrationEnv(emulator, SERVICES, uniquePrefix());
  const first = await startGeohook(t, redis, env);
  await waitFor('readiness', async () => (await first.readyz()).status === 200);

  const keys = await client.lrange(`${env.GEOHOOK_PREFIX}:hooks:default:keys`, 0, -1);
  t.equal(keys.length, 1, 'one key is stored');
  const key = keys[0]!;
  t.ok(Buffer.from(key, 'base64url').length >= GENERATED_KEY_BYTES, 'the key holds at least 32 random bytes');
  for (const service of SERVICES) t.equal((await webhooksOf(emulator, service))[0]?.signatureKey, key, `${service} is signed with it`);

  const { record, event } = await fireJob(t, emulator, first);
  t.same(
    record.attempts.map((attempt) => attempt.statusCode),
    [202],
  );
  t.match(event, { verified: true });
  t.notOk(first.log().includes(key), 'the generated key never reaches the log');

  const second = await startGeohook(t, redis, { ...env, PUBLIC_URL: first.url });
  await waitFor('readiness of the second receiver', async () => (await second.readyz()).status === 200);
  t.strictSame(await client.lrange(`${env.GEOHOOK_PREFIX}:hooks:default:keys`, 0, -1), [key], 'the second receiver generated no key');
  t.strictSame(second.server.app.hookKeys.generated('default'), [key], 'and verifies with the same one');
  for (const service of SERVICES) t.equal((await webhooksOf(emulator, service)).length, 1);
});
