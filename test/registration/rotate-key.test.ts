import { Redis } from 'ioredis';
import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { rotateKey } from '../../src/registration/rotate-key.js';
import { sign } from '../../src/signature/sign.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook, webhooksOf } from '../helpers/geohook.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const SERVICES = ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'];
const client = new Redis(redis.url);
t.teardown(() => client.quit());

interface DeliveryRecord {
  id: string;
  outcome: string;
  attempts: { statusCode?: number }[];
}

async function deliveries(url: string): Promise<DeliveryRecord[]> {
  return ((await (await fetch(`${url}/emulator/deliveries`)).json()) as { deliveries: DeliveryRecord[] }).deliveries;
}

const BODY = '{"serviceType":"GPServer","jobId":"rotation","events":[{"eventType":"esriJobSucceeded"}]}';

t.test('rotating the key under a stream of deliveries rejects none, switches the webhooks, then drops the old key', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const env = { ...registrationEnv(emulator, SERVICES, prefix), GEOHOOK_CONFIG: configFile(t, { keyReloadSeconds: 0.1 }) };
  const geohook = await startGeohook(t, redis, env);
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);
  const list = `${prefix}:hooks:default:keys`;
  const oldKey = (await client.lindex(list, 0))!;

  let streaming = true;
  const fired: string[] = [];
  const stream = (async () => {
    while (streaming) {
      const answer = await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome: 'succeeded' });
      fired.push(...(answer.body.deliveries as string[]));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  await waitFor('a few deliveries before the rotation', async () => fired.length >= 5);
  const admin = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'admin', password: 'admin.pass' } });
  const result = await rotateKey({
    client: admin,
    redis: client,
    prefix,
    hookUrl: `${geohook.url}/webhooks/default`,
    services: SERVICES,
    propagationMs: 500,
    graceMs: 300,
  });
  const afterRotation = fired.length;
  await waitFor('a few deliveries after the rotation', async () => fired.length >= afterRotation + 5);
  streaming = false;
  await stream;

  t.match(result, { status: 'success', services: SERVICES.map((service) => ({ service, action: 'updated' })) });
  const done = await waitFor('every delivery to finish', async () => {
    const all = (await deliveries(emulator.url)).filter((delivery) => fired.includes(delivery.id));
    return all.length === fired.length && all.every((delivery) => delivery.outcome !== 'pending') ? all : undefined;
  });
  t.ok(done.length >= 10, `${done.length} deliveries checked`);
  t.strictSame(
    done.filter((delivery) => delivery.outcome !== 'delivered'),
    [],
    'every delivery ended delivered',
  );
  t.notOk(
    done.some((delivery) => delivery.attempts.some((attempt) => attempt.statusCode === 401)),
    'none was rejected with 401',
  );

  const keys = await client.lrange(list, 0, -1);
  t.equal(keys.length, 1, 'only the new key is left');
  t.not(keys[0], oldKey);
  for (const service of SERVICES)
    t.equal((await webhooksOf(emulator, service))[0]?.signatureKey, keys[0], `${service} is signed with the new key`);
  const post = (key: string): Promise<Response> =>
    fetch(`${geohook.url}/webhooks/default`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service': sign(key, BODY) },
      body: BODY,
    });
  await waitFor('the old key to stop verifying', async () => (await post(oldKey)).status === 401);
  t.equal((await post(keys[0]!)).status, 202, 'the new key verifies');
  t.notOk(geohook.log().includes(keys[0]!), 'the new key never reaches the log');
});
