import { Redis } from 'ioredis';
import t from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { readChangesStatus } from '../../src/changes/changes-status.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { consumeChanges } from '../helpers/change-consumer.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// Issue 51: a change event's source.origin is how its range reached geohook, not what last reached the service.

const redis = await startRedis(t);

const count = (events: readonly ChangeEvent[], n: number) => waitFor(`${n} change events`, () => events.length >= n && events);

t.test('edits made while the receiver was stopped (no server retries) say backfill; a delivered edit says webhook', async (t) => {
  const emulator = await startEmulator(t);
  await emulator.admin('services/webhooks/settings', { notificationAttempts: '1', numberOfFailures: '10', daysInPast: '1' }, 'orgadmin');
  const prefix = uniquePrefix();
  const env = { ...registrationEnv(emulator, [PARCELS], prefix), CHANGES: PARCELS, PORT: String(await findFreePort()) };
  const first = await startGeohook(t, redis, env);
  await waitFor('registered', async () => (await first.readyz()).status === 200);
  const events = await consumeChanges(t, redis.url, prefix);
  const add = (parcelId: string) =>
    emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
      edits: [{ id: 0, adds: [{ attributes: { parcel_id: parcelId } }] }],
    });
  await add('delivered');
  await count(events, 1);
  // Stopped once its range is released (a range left pending is taken again only once it looks stale).
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  await waitFor('the range released', async () => (await readChangesStatus(raw, prefix)).services[0]?.scopes[0]?.pending === undefined);
  await first.stop();
  for (let n = 1; n <= 5; n += 1) await add(`missed-${n}`);
  await waitFor('the deliveries refused', async () => {
    const { deliveries } = (await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as { deliveries: { outcome: string }[] };
    return deliveries.length === 6 && deliveries.slice(1).every((delivery) => delivery.outcome === 'failed');
  });
  const second = await startGeohook(t, redis, env);
  await waitFor('registered again', async () => (await second.readyz()).status === 200);
  await count(events, 6);
  await add('after');
  await count(events, 7);
  t.same(
    [...events]
      .sort((a, b) => Number(a.key.objectId) - Number(b.key.objectId))
      .map((event) => [event.after?.attributes.parcel_id, event.source.origin]),
    [['delivered', 'webhook'], ...[1, 2, 3, 4, 5].map((n) => [`missed-${n}`, 'backfill']), ['after', 'webhook']],
  );
});

t.test('edits only a poll finds say poll', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const { REGISTER: _register, ...admin } = registrationEnv(emulator, [PARCELS], prefix);
  const geohook = await startGeohook(t, redis, { ...admin, CHANGES: PARCELS, POLL: PARCELS, POLL_INTERVAL_SECONDS: '0.2' });
  await waitFor('following', async () => (await geohook.readyz()).status === 200);
  const events = await consumeChanges(t, redis.url, prefix);
  for (const parcelId of ['P-1', 'P-2', 'P-3'])
    await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
      edits: [{ id: 0, adds: [{ attributes: { parcel_id: parcelId } }] }],
    });
  await count(events, 3);
  t.same(
    events.map((event) => event.source.origin),
    ['poll', 'poll', 'poll'],
  );
});
