import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import type pg from 'pg';
import type { Test } from 'tap';
import {
  layerGenerations,
  layerResource,
  mirrorDifferences,
  mirrorGenerations,
  queryFeatures,
  type MirrorDifference,
} from '../../harness/faults/mirror-audit.js';
import type { RedisServer } from '../../src/embedded/redis-server.js';
import type { EmulatorOptions } from '../../src/emulator/build-emulator.js';
import { PARCELS } from './edits.js';
import { startEmulator } from './emulator.js';
import { registrationEnv, startGeohook } from './geohook.js';
import type { TestPostgres } from './postgres.js';
import { uniquePrefix } from './receiver.js';
import { square } from './square.js';
import { waitFor } from './wait.js';

let schemas = 0;
/** The dashboard token of {@link mirrorParcels}'s geohook. */
export const DASHBOARD = 'mirror-dashboard-token-0123456789';

/**
 * The emulator with `parcels` parcels, and geohook registered on Parcels mirroring it into a fresh schema; `env`
 * adds to geohook's environment, `seed` edits the emulator before geohook starts, `emulator` is its options.
 */
export async function mirrorParcels(
  t: Test,
  { redis, postgres }: { redis: RedisServer; postgres: TestPostgres },
  parcels: number,
  more: {
    env?: Record<string, string>;
    seed?: (url: string, authentication: ApiKeyManager) => Promise<void>;
    emulator?: EmulatorOptions;
  } = {},
) {
  const emulator = await startEmulator(t, more.emulator);
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  const token = await emulator.token();
  const authentication = ApiKeyManager.fromKey(token);
  if (parcels > 0) {
    const adds = Array.from({ length: parcels }, (_, index) => ({
      attributes: {
        parcel_id: `P-${index}`,
        owner: `Owner ${index}`,
        status: 'Open',
        area_sqm: index + 0.5,
        assessed_value: '9007199254740993',
      },
      geometry: square((index % 20) * 100, Math.floor(index / 20) * 100) as never,
    }));
    await applyEdits({ url: `${url}/0`, authentication, adds });
  }
  await more.seed?.(url, authentication);
  schemas += 1;
  const schema = `mirror_${schemas}`;
  const env = {
    ...registrationEnv(emulator, [PARCELS], uniquePrefix()),
    MIRROR: PARCELS,
    MIRROR_DATABASE_URL: postgres.url,
    MIRROR_SCHEMA: schema,
    DASHBOARD_TOKEN: DASHBOARD,
    ...more.env,
  };
  const geohook = await startGeohook(t, redis, env);
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const client = await postgres.connect(t);
  return { emulator, geohook, url, token, authentication, schema, client, env };
}

/** Resolves once `mirror_state` holds every layer's generation on the server. */
export async function caughtUp(client: pg.Client, schema: string, url: string, token: string): Promise<Map<number, number>> {
  // A copy or a range waits for CPU beside the other test files: a minute, not the default 20 s.
  return waitFor(
    'the mirror at the layers’ generations',
    async () => {
      const [server, mirror] = await Promise.all([layerGenerations(url, token), mirrorGenerations(client, schema, PARCELS)]);
      const max = Math.max(...server.values());
      return server.size === mirror.size && [...mirror.values()].every((gen) => gen === max) && mirror;
    },
    { timeoutMs: 60_000 },
  );
}

export async function differences(
  client: pg.Client,
  schema: string,
  url: string,
  token: string,
  layerId: number,
  table: string,
): Promise<MirrorDifference[]> {
  const layer = await layerResource(url, layerId, token);
  return mirrorDifferences(client, { schema, table, layer }, await queryFeatures(url, layerId, token));
}
