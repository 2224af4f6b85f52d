import { boundHeapGrowth } from '../../../src/cli/heap-growth.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { buildReceiver } from '../../../src/receiver/build-receiver.js';
import { GEOHOOK_LOG_LEVEL } from './case-names.js';
import { serveCase } from './case-server.js';

/**
 * Cases c and d: geohook's real receiver, as `buildReceiver` makes it from a loaded configuration (d is
 * the same server on a Redis that fsyncs at every write), with the heap growth the CLI bounds.
 */
boundHeapGrowth();
await serveCase(async ({ redisUrl, prefix, secret }) => {
  const config = loadConfig({ REDIS_URL: redisUrl, GEOHOOK_PREFIX: prefix, HOOK_SECRETS: secret, LOG_LEVEL: GEOHOOK_LOG_LEVEL });
  const app = await buildReceiver({ config });
  // Listening before Redis answers would turn the first deliveries into 503s.
  await app.eventQueue.ready();
  return app;
});
