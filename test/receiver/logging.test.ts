import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { fixture } from '../helpers/paths.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

t.test('logged requests carry their headers but never the key or the signature header value', async (t) => {
  const redis = await startRedis(t);
  const { logger: loggerInstance, lines } = capturingLogger();
  const receiver = await startReceiver(t, redis, {}, { loggerInstance });

  const body = fixture('enterprise-feature-created.json');
  const good = sign(TEST_KEY, body);
  const bad = sign('attacker-key', body);
  t.equal(
    (await receiver.post(body, { 'x-service': good, 'x-esriHook-Signature': good, authorization: 'Bearer s3cr3t-token' })).status,
    202,
  );
  t.equal((await receiver.post(body, { 'x-service': bad })).status, 401);
  t.equal((await receiver.post('{broken', { 'x-service': sign(TEST_KEY, '{broken') })).status, 400);
  const form = fixture('agol-form-signed.txt');
  t.equal((await receiver.post(form, { 'content-type': 'application/x-www-form-urlencoded' })).status, 202);

  const log = lines.join('\n');
  const incoming = lines.map((line) => JSON.parse(line)).find((entry) => entry.req?.headers?.['x-service'] !== undefined);
  t.ok(incoming, 'request headers are logged');
  t.equal(incoming.req.headers['x-service'], '[redacted]');
  t.equal(incoming.req.headers['content-type'], 'application/json', 'other headers stay readable');
  for (const secret of [TEST_KEY, good, good.slice(7), bad.slice(7), 's3cr3t-token', 'Am/OxNFmd4yCfwmvon9dlF8bcqMoRhNSI0uGue6d98M=']) {
    t.notOk(log.includes(secret), `the log does not contain ${secret.slice(0, 12)}…`);
  }
});

t.test('secret-named fields are redacted wherever a log line puts them', async (t) => {
  const { logger, lines } = capturingLogger('info');
  logger.info(
    { secrets: ['k1'], hook: { name: 'h', secrets: ['k2'], signatureKey: 'k3' }, token: 'k4', admin: { password: 'k5' } },
    'config',
  );
  const line = lines.join('');
  for (const secret of ['k1', 'k2', 'k3', 'k4', 'k5']) t.notOk(line.includes(`"${secret}"`), `${secret} is redacted`);
  t.ok(line.includes('"name":"h"'), 'other fields stay');
});

t.test('a hook without a key is reported at start-up, unless self-registration will generate the key of the default hook', async (t) => {
  const redis = await startRedis(t);
  const warnings = async (env: Record<string, string>): Promise<string[]> => {
    const { logger: loggerInstance, lines } = capturingLogger('warn');
    const receiver = await startReceiver(t, redis, { HOOK_SECRETS: '', ...env }, { loggerInstance });
    await receiver.app.close();
    return lines.map((line) => (JSON.parse(line) as { msg: string }).msg).filter((msg) => msg.startsWith('hook has no signature key'));
  };
  t.equal((await warnings({})).length, 1, 'the default hook without a key is reported');
  t.same(
    await warnings({ ADMIN_URL: 'http://127.0.0.1:9/arcgis/admin', REGISTER: 'Tools/Buffer.GPServer' }),
    [],
    'not when registration generates its key',
  );
});
