import { readFileSync } from 'node:fs';
import t from 'tap';
import { claimedService } from '../../src/receiver/claimed-service.js';
import { sign } from '../../src/signature/sign.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { repoPath } from '../helpers/paths.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const fixture = (name: string): Buffer => readFileSync(repoPath('test/fixtures', name));

t.test('the service a refused body names, read from its first bytes: JSON, ArcGIS Online arrays and forms', async (t) => {
  t.equal(claimedService(fixture('enterprise-gp-succeeded.json')), 'Tools/Buffer.GPServer');
  t.equal(claimedService(fixture('agol-features-created.json')), 'myService.FeatureServer', 'ArcGIS Online names no type');
  t.equal(claimedService(fixture('agol-form-signed.txt')), 'myService.FeatureServer', 'a form, decoded');
  t.equal(
    claimedService(Buffer.from('{"serviceType":"GPServer","serviceName":"Buffer"}')),
    'Buffer.GPServer',
    'no folder: the root folder',
  );
});

t.test('nothing is claimed for a body that names no service, or a name ArcGIS could not have made', async (t) => {
  t.equal(claimedService(Buffer.from('{"hello":"world"}')), undefined);
  t.equal(claimedService(Buffer.from('{"serviceType":"GPServer","serviceName":"X <!channel>"}')), undefined);
  t.equal(claimedService(Buffer.from('payload=%E0%A4%A')), undefined, 'an escape cut short');
  t.equal(claimedService(Buffer.alloc(0)), undefined);
  const late = Buffer.from(`{"pad":"${'x'.repeat(5000)}","serviceType":"GPServer","serviceName":"Late"}`);
  t.equal(claimedService(late), undefined, 'only the first bytes are looked at');
});

t.test('a delivery refused for its signature is a warning naming the hook, the service its body claims and what to run', async (t) => {
  const redis = await startRedis(t);
  const { logger: loggerInstance, lines } = capturingLogger();
  const receiver = await startReceiver(t, redis, {}, { loggerInstance });
  const body = fixture('enterprise-gp-succeeded.json');
  t.equal((await receiver.post(body, { 'x-service': sign('another-key', body) })).status, 401);
  const line = JSON.parse(lines.find((text) => text.includes('its signature matches no key'))!) as Record<string, unknown>;
  t.match(line, {
    level: 40,
    hook: 'default',
    code: 'GEOHOOK_ERR_BAD_SIGNATURE',
    claims: 'Tools/Buffer.GPServer (unverified)',
    fix: /geohook doctor --service Tools\/Buffer\.GPServer compares them/,
  });
});
