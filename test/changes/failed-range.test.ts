import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { changesQueueName } from '../../src/changes/change-queues.js';
import { replayJob } from '../../src/changes/range-jobs.js';
import { startChanges } from '../../src/changes/start-changes.js';
import type { Alert } from '../../src/health/alert-sender.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

t.test('a range the server refuses fails for good at once: recorded, alerted, and the scope moves on', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => connection.disconnect());
  // The server refuses every extractChanges of this run, as one that no longer keeps the history would.
  let refuse = true;
  const refusing: typeof fetch = async (input, init) =>
    refuse && String(input).includes('/extractChanges')
      ? Response.json({ error: { code: 400, message: 'Unable to complete operation.', details: ['history no longer kept'] } })
      : fetch(input, init);
  const alerts: Alert[] = [];
  const changes = startChanges({
    connection,
    prefix,
    hook: 'default',
    adminUrl: emulator.baseUrl,
    services: [PARCELS],
    track: [],
    auth: { token: await emulator.token() },
    serviceLocator: createServiceLocator({ adminUrl: emulator.baseUrl }),
    dedupMs: 60_000,
    jobOptions: {},
    logger: pino({ level: 'silent' }),
    fetch: refusing,
    alert: async (alert) => void alerts.push(alert),
  });
  t.teardown(() => changes.close());
  await waitFor('followed', () => changes.notReadyReason() === undefined);
  const scope = `default ${PARCELS}`;
  const from = Number(await connection.hget(`${prefix}:changes:resolved`, scope));
  // The receiver moved the watermark over an edit.
  await connection.hset(`${prefix}:watermarks`, scope, String(from + 10));
  const [alert] = await waitFor('the alert', () => alerts.length > 0 && alerts);
  t.match(alert, { event: 'change.unresolvable', service: scope, serverGens: [from, from + 10], error: /history no longer kept/ });
  t.match(JSON.parse((await connection.hget(`${prefix}:changes:failed`, scope))!), { from, to: from + 10, error: /history/ });
  await waitFor('the scope released', async () => (await connection.hexists(`${prefix}:changes:pending`, scope)) === 0);
  t.equal(await connection.hget(`${prefix}:changes:resolved`, scope), String(from + 10), 'the scope moves on past the range');

  // Once the cause is fixed, a replay of the range resolves it, and it is no longer listed as failed.
  refuse = false;
  const ranges = new Queue(changesQueueName, { connection, prefix });
  t.teardown(() => ranges.close());
  const replay = replayJob({
    scope,
    from,
    to: from + 10,
    hook: 'default',
    serviceUrl: `${emulator.url}/arcgis/rest/services/${PARCELS.replace('.', '/')}`,
  });
  await ranges.add(replay.name, replay.data, replay.opts);
  await waitFor('the failed range forgotten', async () => (await connection.hexists(`${prefix}:changes:failed`, scope)) === 0);
});
