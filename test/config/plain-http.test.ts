import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { plainHttpUrls } from '../../src/config/plain-http.js';
import { startServer } from '../../src/server.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { startRedis } from '../helpers/redis.js';

t.test('issue 51 (N7): plain http to a GIS server off this machine is named by its setting and origin', async (t) => {
  const config = loadConfig({
    ADMIN_URL: 'http://gis.example.com/arcgis/admin',
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'admin.pass',
    TOKEN_URL: 'http://portal.example.com:8080/portal/sharing/rest/generateToken?x=1',
    TRUSTED_ORIGINS: 'https://gis2.example.com,http://127.0.0.1:7080,http://localhost:7081,http://gis3.example.com/arcgis/',
  });
  t.strictSame(plainHttpUrls(config), [
    { setting: 'ADMIN_URL', origin: 'http://gis.example.com' },
    { setting: 'TOKEN_URL', origin: 'http://portal.example.com:8080' },
    { setting: 'TRUSTED_ORIGINS', origin: 'http://gis3.example.com' },
  ]);
  t.strictSame(plainHttpUrls(loadConfig({ ADMIN_URL: 'http://127.0.0.1:7080/arcgis/admin' })), [], 'this machine is no concern');
});

t.test('issue 51 (N7): start-up warns once, in one line, with no password', async (t) => {
  const redis = await startRedis(t);
  const { logger, lines } = capturingLogger('info');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_URL: redis.url,
    ADMIN_URL: 'http://gis.example.com/arcgis/admin',
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'admin.pass',
    TRUSTED_ORIGINS: 'http://gis2.example.com',
  });
  const server = await startServer(config, { logger });
  await server.close();
  const warnings = lines.filter((line) => line.includes('plain http'));
  t.equal(warnings.length, 1, 'one line');
  t.match(JSON.parse(warnings[0]!), {
    level: 40,
    urls: [
      { setting: 'ADMIN_URL', origin: 'http://gis.example.com' },
      { setting: 'TRUSTED_ORIGINS', origin: 'http://gis2.example.com' },
    ],
  });
  t.notMatch(lines.join('\n'), /admin\.pass/);
});
