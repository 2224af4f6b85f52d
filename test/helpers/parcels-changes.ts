import { ApiKeyManager } from '@esri/arcgis-rest-request';
import type { Test } from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import type { SubmissionEvent } from '../../src/changes/submission-event.js';
import type { RedisServer } from '../../src/embedded/redis-server.js';
import { consumeChanges } from './change-consumer.js';
import { PARCELS } from './edits.js';
import { startEmulator } from './emulator.js';
import { registrationEnv, startGeohook } from './geohook.js';
import { uniquePrefix } from './receiver.js';
import { waitFor } from './wait.js';

/** geohook registered on Parcels with change events, its consumer's events, and a client of the emulator's Parcels. */
export async function setUpParcelsChanges(t: Test, redis: RedisServer, env: Record<string, string> = {}) {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, [PARCELS], prefix),
    CHANGES: PARCELS,
    // The emulator is the portal Survey123 webhooks' tokens are checked with.
    PORTAL_URL: `${emulator.url}/arcgis`,
    ...env,
  });
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const submissions: SubmissionEvent[] = [];
  const events = await consumeChanges(t, redis.url, prefix, submissions);
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  return { emulator, geohook, events, submissions, url, authentication, prefix };
}

/** Waits until `events` holds at least `n` change events; resolves to them. */
export const countChanges = (events: readonly ChangeEvent[], n: number) =>
  waitFor(`${n} change events`, () => events.length >= n && events);
