import { Redis } from 'ioredis';
import t from 'tap';
import { runCli } from '../../helpers/cli.js';
import { startEmulator } from '../../helpers/emulator.js';
import { registrationEnv, startGeohook, webhooksOf } from '../../helpers/geohook.js';
import { configFile, uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

const redis = await startRedis(t);
const SERVICES = ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'];
const client = new Redis(redis.url);
t.teardown(() => client.quit());

t.test('geohook admin rotate-key rotates from the environment and prints the services', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const env = { ...registrationEnv(emulator, SERVICES, prefix), GEOHOOK_CONFIG: configFile(t, { keyReloadSeconds: 0.1 }) };
  const geohook = await startGeohook(t, redis, env);
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);
  const oldKey = await client.lindex(`${prefix}:hooks:default:keys`, 0);
  const cliEnv = { ...env, REDIS_URL: redis.url, PUBLIC_URL: geohook.url };
  const run = await runCli(['admin', 'rotate-key', '--propagation-seconds', '0.2', '--grace-seconds', '0'], { env: cliEnv });
  t.equal(run.code, 0, run.stderr);
  t.match(JSON.parse(run.stdout), {
    status: 'success',
    services: [
      { service: SERVICES[0], action: 'updated' },
      { service: SERVICES[1], action: 'updated' },
    ],
  });
  const keys = await client.lrange(`${prefix}:hooks:default:keys`, 0, -1);
  t.equal(keys.length, 1);
  t.not(keys[0], oldKey);
  t.notOk(run.stdout.includes(keys[0]!), 'the key is not printed');
  t.equal((await webhooksOf(emulator, SERVICES[0]!))[0]?.signatureKey, keys[0]);

  const missing = await runCli(['admin', 'rotate-key'], { env: { ...cliEnv, REDIS_URL: '' } });
  t.not(missing.code, 0);
  t.match(missing.stderr, /REDIS_URL: required/);
  const configured = await runCli(['admin', 'rotate-key'], { env: { ...cliEnv, HOOK_SECRETS: 'configured' } });
  t.match(configured.stderr, /HOOK_SECRETS/);
});
